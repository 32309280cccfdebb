"""What a command refuses to run with: one line saying what to do, exit 2."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class CliError(Exception):
    """Input the command cannot run with; the message says what to do instead."""


class PortInUse(SystemExit):
    pass


@contextmanager
def database_errors(label: str) -> Iterator[None]:
    """A database that cannot be reached, is ahead of this code or refuses: one line."""
    from backend.server.stores import DatabaseError, SchemaTooNew

    try:
        yield
    except SchemaTooNew as exc:
        raise CliError(f"{label}: {exc}") from None
    except DatabaseError as exc:
        raise CliError(f"{label}: {exc}; check LH_DATABASE_URL and that the server runs") from None
