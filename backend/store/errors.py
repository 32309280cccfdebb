"""Typed storage errors specific to the file adapters, and the OSError mapping."""

from __future__ import annotations

import errno

from backend.core.errors import StorageError


class AlreadyExists(StorageError):
    """`create` of a record whose id is already taken."""


class DiskError(StorageError):
    """The OS refused a file operation; `errno_name` is e.g. `ENOSPC` or `EIO`."""

    def __init__(self, message: str, errno_name: str) -> None:
        super().__init__(message)
        self.errno_name = errno_name


def storage_error(exc: OSError, op: str, path: str) -> DiskError:
    """A `DiskError` naming the operation, the file and the errno name."""
    name = errno.errorcode.get(exc.errno or 0, "EUNKNOWN")
    return DiskError(f"{op} {path} failed: {name} ({exc.strerror or exc})", name)
