"""The seam over every OS call the stores make, so tests can spy on it or inject faults."""

from __future__ import annotations

import os
import threading
from typing import Protocol

from backend.store.record_cache import FileIdentity

APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT
EXCLUSIVE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL


class FileOps(Protocol):
    """Blocking file primitives; each raises `OSError` exactly as the OS does."""

    def open(self, path: str, flags: int, mode: int = 0o644) -> int: ...

    def write(self, fd: int, data: bytes | bytearray | memoryview) -> int: ...

    def fsync(self, fd: int) -> None: ...

    def close(self, fd: int) -> None: ...

    def replace(self, src: str, dst: str) -> None: ...

    def fsync_dir(self, path: str) -> None: ...

    def read(self, path: str, offset: int = 0, length: int = -1) -> bytes: ...

    def size(self, path: str) -> int: ...

    def identity(self, path: str) -> FileIdentity: ...

    def listdir(self, path: str) -> list[str]: ...

    def unlink(self, path: str) -> None: ...

    def truncate(self, path: str, size: int) -> None: ...

    def makedirs(self, path: str) -> None: ...


class OsFileOps:
    """The real thing: thin wrappers over `os`; `truncate` is durable (fsyncs the file)."""

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        return os.open(path, flags | getattr(os, "O_CLOEXEC", 0), mode)

    def write(self, fd: int, data: bytes | bytearray | memoryview) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def close(self, fd: int) -> None:
        os.close(fd)

    def replace(self, src: str, dst: str) -> None:
        os.replace(src, dst)

    def fsync_dir(self, path: str) -> None:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self, path: str, offset: int = 0, length: int = -1) -> bytes:
        with open(path, "rb") as f:
            if offset:
                f.seek(offset)
            return f.read(length)

    def size(self, path: str) -> int:
        return os.stat(path).st_size

    def identity(self, path: str) -> FileIdentity:
        st = os.stat(path)
        return FileIdentity(st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def listdir(self, path: str) -> list[str]:
        return os.listdir(path)

    def unlink(self, path: str) -> None:
        os.unlink(path)

    def truncate(self, path: str, size: int) -> None:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        finally:
            os.close(fd)

    def makedirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)


CRASH_OPS = ("write", "half_write", "fsync", "replace", "fsync_dir")
CRASH_EXIT_CODE = 137  # what a shell reports for a SIGKILLed process


class CrashingFileOps(OsFileOps):
    """TEST-ONLY fault hook: the process dies (`os._exit`, no cleanup, like SIGKILL) at a
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
