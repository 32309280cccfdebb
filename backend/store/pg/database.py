"""One PostgreSQL database shared by every learner's adapters: the process's connection
pool, how JSON crosses the wire, and the one place driver errors become typed errors.

    psycopg.OperationalError (lost connection, server shutting down or starting, no
    connection free in time)          → DatabaseUnavailable (reads are tried once more
                                         on a fresh connection first; writes never are:
                                         whether a lost commit landed is unknown)
    any other psycopg.Error           → DatabaseError
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import psycopg
import psycopg.adapt
from psycopg.abc import Buffer
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from backend.store.errors import DatabaseError, DatabaseUnavailable
from backend.store.pg.migrations import migrate, refuse_newer_schema

log = logging.getLogger("harness.store")

T = TypeVar("T")
Connection = psycopg.AsyncConnection[TupleRow]
Operation = Callable[[Connection], Awaitable[T]]

POOL_MIN = 1
POOL_MAX = 10
CONNECT_TIMEOUT_S = 5
ACQUIRE_TIMEOUT_S = 5.0
"""How long an operation waits for a connection before the learner is told the database
is unavailable (rather than waiting as long as a restart takes)."""

_UNAVAILABLE_SQLSTATE_CLASSES = ("08", "57P")  # connection exceptions; shutdown, starting up


class JsonBytes(bytes):
    """Encoded JSON sent as a `json` parameter as it is (no decoding, no re-encoding)."""


class _JsonBytesDumper(psycopg.adapt.Dumper):
    oid = psycopg.adapters.types["json"].oid

    def dump(self, obj: Any) -> Buffer:
        data: bytes = obj
        return data


class _RawJsonLoader(psycopg.adapt.Loader):
    """`json` columns come back as their bytes, for msgspec to decode into Structs."""

    def load(self, data: Buffer) -> bytes:
        return bytes(data)


def _adapters() -> psycopg.adapt.AdaptersMap:
    adapters = psycopg.adapt.AdaptersMap(psycopg.adapters)
    adapters.register_dumper(JsonBytes, _JsonBytesDumper)
    adapters.register_loader("json", _RawJsonLoader)
    return adapters


def unavailable(exc: psycopg.Error) -> bool:
    """Whether `exc` says the server is out of reach (as opposed to refusing a statement)."""
    if isinstance(exc, PoolTimeout | psycopg.InterfaceError):
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate
    return state is None or state.startswith(_UNAVAILABLE_SQLSTATE_CLASSES)


class PgDatabase:
    """A pool of connections (autocommit; transactions are explicit) and `run`, through
    which every adapter operation goes."""

    def __init__(self, pool: AsyncConnectionPool[Connection]) -> None:
        self.pool = pool
        self._checking = False

    async def run(self, op: Operation[T], *, retry: bool) -> T:
        """`op` on a pooled connection. `retry`: the operation only reads, so a lost
        connection is replaced and the operation run once more."""
        attempts = 2 if retry else 1
        for attempt in range(attempts):
            try:
                async with self.pool.connection() as conn:
                    return await op(conn)
            except psycopg.Error as exc:
                if not unavailable(exc):
                    log.error("[store] database error: %s", _one_line(exc))
                    raise DatabaseError(f"database error: {_one_line(exc)}") from exc
                log.warning("[store] database unavailable: %s", _one_line(exc))
                await self._recover()
                if attempt + 1 == attempts:
                    raise DatabaseUnavailable(f"database unavailable: {_one_line(exc)}") from exc
        raise AssertionError("unreachable")  # pragma: no cover

    async def _recover(self) -> None:
        """Test the idle connections and replace the dead ones (after a server restart
        every idle connection is dead); one check at a time."""
        if self._checking:
            return
        self._checking = True
        try:
            await self.pool.check()
        except psycopg.Error as exc:
            log.warning("[store] could not check the pool: %s", _one_line(exc))
        finally:
            self._checking = False


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


@asynccontextmanager
async def open_database(
    url: str,
    *,
    min_size: int = POOL_MIN,
    max_size: int = POOL_MAX,
    acquire_timeout_s: float = ACQUIRE_TIMEOUT_S,
    migrate_schema: bool = True,
) -> AsyncIterator[PgDatabase]:
    """The database at `url`, its schema migrated to this code's (`SchemaTooNew` if the
    database is ahead; `migrate_schema=False` for read-only uses), for the block; the
    pool is closed after it. `DatabaseUnavailable` at once, with the server's reason,
    when it cannot be reached."""
    kwargs: dict[str, Any] = {
        "autocommit": True,
        "context": _adapters(),
        "connect_timeout": CONNECT_TIMEOUT_S,
        "application_name": "learning-harness",
    }
    await _first_contact(url, kwargs, migrate_schema)
    pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        timeout=acquire_timeout_s,
        open=False,
        name="harness",
        kwargs=kwargs,
    )
    try:
        await pool.open(wait=True, timeout=acquire_timeout_s + CONNECT_TIMEOUT_S)
    except PoolTimeout as exc:
        await pool.close()
        raise DatabaseUnavailable(f"cannot reach the database: {_one_line(exc)}") from exc
    try:
        yield PgDatabase(pool)
    finally:
        await pool.close()


async def _first_contact(url: str, kwargs: dict[str, Any], migrate_schema: bool) -> None:
    """Connect once (and migrate, or check the schema is not ahead) before the pool: a wrong
    URL, a refused connection or a bad password is reported at once, as the server said it."""
    try:
        conn = await psycopg.AsyncConnection.connect(url, **kwargs)
    except psycopg.Error as exc:
        raise DatabaseUnavailable(f"cannot reach the database: {_one_line(exc)}") from exc
    try:
        if not migrate_schema:
            await refuse_newer_schema(conn)
            return
        applied = await migrate(conn)
    except psycopg.Error as exc:
        raise DatabaseError(f"could not migrate the database: {_one_line(exc)}") from exc
    finally:
        await conn.close()
    for migration in applied:
        log.info("[store] schema migrated to %d (%s)", migration.version, migration.name)
