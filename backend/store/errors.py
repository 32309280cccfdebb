"""Typed storage errors of the adapters (files and PostgreSQL), and the OSError mapping."""

from __future__ import annotations

import errno

from backend.core.errors import StorageError


class DiskError(StorageError):
    """The OS refused a file operation; `errno_name` is e.g. `ENOSPC` or `EIO`."""

    def __init__(self, message: str, errno_name: str) -> None:
        super().__init__(message)
        self.errno_name = errno_name


def storage_error(exc: OSError, op: str, path: str) -> DiskError:
    """A `DiskError` naming the operation, the file and the errno name."""
    name = errno.errorcode.get(exc.errno or 0, "EUNKNOWN")
    return DiskError(f"{op} {path} failed: {name} ({exc.strerror or exc})", name)


class DatabaseError(StorageError):
    """The database refused an operation (a constraint, a bad statement); the detail is
    for the operator's log."""

    def public_message(self) -> str:
        return "the server could not save or read this chat (database error)"


class DatabaseUnavailable(DatabaseError):
    """The database could not be reached (down, restarting, or no connection free in
    time); the operation may be tried again once it is back."""

    retryable = True

    def public_message(self) -> str:
        return "the server could not save or read this chat (database unavailable)"


class SchemaTooNew(StorageError):
    """The database's schema was written by newer code than this; nothing is changed."""
