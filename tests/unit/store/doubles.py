"""FileOps doubles for store tests (and the fault-injection suite): a spy and a fault injector."""

from __future__ import annotations

import errno
import os
from collections.abc import Awaitable

from backend.core.errors import StorageError
from backend.store.fileops import OsFileOps

MUTATING = ("write", "fsync", "replace", "fsync_dir", "truncate")


class SpyFileOps(OsFileOps):
    """The real OS calls, each recorded as (op, first argument) in `calls`."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []
        self.fds: dict[int, str] = {}

    def _note(self, op: str, arg: object) -> None:
        self.calls.append((op, arg))

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        self._note("open", path)
        fd = super().open(path, flags, mode)
        self.fds[fd] = path
        return fd

    def write(self, fd: int, data: bytes | bytearray | memoryview) -> int:
        self._note("write", self._path(fd))
        return super().write(fd, data)

    def fsync(self, fd: int) -> None:
        self._note("fsync", self._path(fd))
        super().fsync(fd)

    def close(self, fd: int) -> None:
        self._note("close", self._path(fd))
        super().close(fd)

    def replace(self, src: str, dst: str) -> None:
        self._note("replace", dst)
        super().replace(src, dst)

    def fsync_dir(self, path: str) -> None:
        self._note("fsync_dir", path)
        super().fsync_dir(path)

    def read(self, path: str, offset: int = 0, length: int = -1) -> bytes:
        self._note("read", path)
        return super().read(path, offset, length)

    def size(self, path: str) -> int:
        self._note("size", path)
        return super().size(path)

    def identity(self, path: str):
        self._note("identity", path)
        return super().identity(path)

    def listdir(self, path: str) -> list[str]:
        self._note("listdir", path)
        return super().listdir(path)

    def unlink(self, path: str) -> None:
        self._note("unlink", path)
        super().unlink(path)

    def truncate(self, path: str, size: int) -> None:
        self._note("truncate", path)
        super().truncate(path, size)

    def makedirs(self, path: str) -> None:
        self._note("makedirs", path)
        super().makedirs(path)

    def _path(self, fd: int) -> str:
        return self.fds.get(fd, str(fd))


class Crash(BaseException):
    """A simulated kill: not an OSError, so no cleanup code in the store runs."""


class FaultyFileOps(SpyFileOps):
    """Raises `OSError(code)` (or `Crash`) at the n-th call of any op in `ops` (1-based);
    with `persistent`, every later call of those ops fails too."""

    def __init__(
        self,
        ops: tuple[str, ...],
        n: int,
        code: int = errno.ENOSPC,
        *,
        persistent: bool = False,
        crash: bool = False,
    ) -> None:
        super().__init__()
        self.ops, self.n, self.code = ops, n, code
        self.persistent, self.crash = persistent, crash
        self.count = 0
        self.fired = False

    def _note(self, op: str, arg: object) -> None:
        super()._note(op, arg)
        if op not in self.ops:
            return
        self.count += 1
        if self.count == self.n or (self.persistent and self.count > self.n):
            self.fired = True
            if self.crash:
                raise Crash(op)
            raise OSError(self.code, os.strerror(self.code), str(arg))


class ShortWriteFileOps(OsFileOps):
    """Every `write` writes only the first half of its buffer (a disk filling up)."""

    def write(self, fd: int, data: bytes | bytearray | memoryview) -> int:
        view = memoryview(data)
        return super().write(fd, view[: max(1, len(view) // 2)])


async def failure(operation: Awaitable[object]) -> StorageError | None:
    """Await `operation`; the `StorageError` it raised, or None when it succeeded."""
    try:
        await operation
    except StorageError as exc:
        return exc
    return None
