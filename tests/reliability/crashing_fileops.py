"""A crashing `FileOps` (test-only): the process dies at a named file operation, so the
crash-recovery tests can kill a real server at an exact moment. Production code has no
crash hook; `crash_server` runs a server with this one injected."""

from __future__ import annotations

import os
import threading

from backend.store.fileops import OsFileOps

CRASH_OPS = ("write", "half_write", "fsync", "replace", "fsync_dir")
CRASH_EXIT_CODE = 137  # what a shell reports for a SIGKILLed process


class CrashingFileOps(OsFileOps):
    """The process dies (`os._exit`, no cleanup, like SIGKILL) at a
    named crash point, so crash-recovery tests can kill a real server at an exact moment.

    `op` is counted (1-based) over calls whose path contains `fragment`; at call `n` the
    process exits right *after* the op completed (`write`, `fsync`, `replace`, `fsync_dir`),
    or, for `half_write`, after writing only the first half of the buffer (a torn append).
    """

    def __init__(self, op: str, n: int, fragment: str = "") -> None:
        if op not in CRASH_OPS or n < 1:
            raise ValueError(f"crash point must be one of {CRASH_OPS} with n >= 1, got {op}:{n}")
        self.op, self.n, self.fragment = op, n, fragment
        self.count = 0
        self._paths: dict[int, str] = {}
        self._lock = threading.Lock()  # stores call from worker threads

    @classmethod
    def from_spec(cls, spec: str) -> CrashingFileOps:
        """Parse `op[@path-fragment]:n`, e.g. `replace:3` or `half_write@graph/events:1`."""
        head, sep, count = spec.strip().rpartition(":")
        if not sep or not count.isdigit():
            raise ValueError(f"crash point {spec!r} is not op[@path-fragment]:n")
        op, _, fragment = head.partition("@")
        return cls(op, int(count), fragment)

    def _due(self, op: str, path: str) -> bool:
        if op != self.op or self.fragment not in path:
            return False
        with self._lock:
            self.count += 1
            return self.count == self.n

    def _die(self) -> None:
        os._exit(CRASH_EXIT_CODE)

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        fd = super().open(path, flags, mode)
        self._paths[fd] = path
        return fd

    def close(self, fd: int) -> None:
        self._paths.pop(fd, None)
        super().close(fd)

    def write(self, fd: int, data: bytes | bytearray | memoryview) -> int:
        path = self._paths.get(fd, "")
        if self._due("half_write", path):
            view = memoryview(data)
            super().write(fd, view[: max(1, len(view) // 2)])
            self._die()
        written = super().write(fd, data)
        if self._due("write", path):
            self._die()
        return written

    def fsync(self, fd: int) -> None:
        super().fsync(fd)
        if self._due("fsync", self._paths.get(fd, "")):
            self._die()

    def replace(self, src: str, dst: str) -> None:
        super().replace(src, dst)
        if self._due("replace", dst):
            self._die()

    def fsync_dir(self, path: str) -> None:
        super().fsync_dir(path)
        if self._due("fsync_dir", path):
            self._die()
