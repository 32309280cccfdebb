"""Whole-file replacement that is atomic and durable: tmp → write → fsync → replace → fsync(dir)."""

from __future__ import annotations

import itertools
import os

from backend.store.errors import storage_error
from backend.store.fileops import EXCLUSIVE_FLAGS, FileOps

TMP_SUFFIX = ".tmp"
_counter = itertools.count()


def tmp_name(path: str) -> str:
    """A unique sibling of `path` (pid + process-wide counter) ending in `.tmp`."""
    return f"{path}.{os.getpid()}-{next(_counter)}{TMP_SUFFIX}"


def write_all(fs: FileOps, fd: int, data: bytes) -> None:
    """Write every byte, looping on short writes; a zero-byte write is a full disk."""
    view = memoryview(data)
    while view:
        n = fs.write(fd, view)
        if n <= 0:
            raise OSError(28, os.strerror(28))  # ENOSPC: the kernel accepted nothing
        view = view[n:]


def replace_atomically(fs: FileOps, path: str, data: bytes) -> None:
    """Make `path` hold exactly `data`, or leave the old file untouched and raise `DiskError`.

    A failure after the replace (the directory fsync) still raises: the new content is
    visible but its durability is unknown, and an fsync is never retried as if it worked.
    """
    tmp = tmp_name(path)
    op = "open"
    replaced = False
    try:
        fd = fs.open(tmp, EXCLUSIVE_FLAGS)
        try:
            op = "write"
            write_all(fs, fd, data)
            op = "fsync"
            fs.fsync(fd)
        finally:
            fs.close(fd)
        op = "replace"
        fs.replace(tmp, path)
        replaced = True
        op = "fsync_dir"
        fs.fsync_dir(os.path.dirname(path))
    except OSError as exc:
        if not replaced:
            _discard(fs, tmp)
        raise storage_error(exc, op, path) from exc


def remove_stray_tmp(fs: FileOps, directory: str) -> list[str]:
    """Delete `*.tmp` left by a crash between temp write and replace; returns their names."""
    removed = []
    for name in fs.listdir(directory):
        if name.endswith(TMP_SUFFIX):
            _discard(fs, os.path.join(directory, name))
            removed.append(name)
    return removed


def _discard(fs: FileOps, path: str) -> None:
    try:
        fs.unlink(path)
    except OSError:
        pass  # best effort: a stray tmp is removed at the next open
