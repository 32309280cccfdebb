"""One harness process writes a file data dir at a time. `harness serve` / `run` hold an
advisory lock on the directory itself for their life; `harness import` and `harness migrate`
take it before they touch the files, so neither runs beside a live server (whose caches and
appends would interleave with theirs). The kernel drops the lock when its process dies, even
on SIGKILL, so a crash never leaves the data dir locked; no file is written for it."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from backend.core.errors import Busy


class DataDirInUse(Busy):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"the data dir {path} is in use by another harness process (a running"
            " `harness serve` or `harness run`?): stop it first"
        )


class DataDirLock:
    """Held from construction until `release` (or the end of a `with` block)."""

    def __init__(self, path: Path) -> None:
        self._fd: int | None = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.release()
            raise DataDirInUse(path) from None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops its flock
            self._fd = None

    def __enter__(self) -> DataDirLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
