"""The seam over every OS call the stores make, so tests can spy on it or inject faults."""

from __future__ import annotations

import os
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
