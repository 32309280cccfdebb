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
PROBE_TIMEOUT_S = 2
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
    which every adapter operation goes.

    Once an operation finds the server out of reach, the database is `down` until an
    operation succeeds: meanwhile each operation first tries one connection of its own
    (refused at once while the server is down, so the learner hears so in milliseconds,
    not after a pool timeout), and once that works the pool's dead connections are
    replaced before the operation runs."""

    def __init__(
        self, pool: AsyncConnectionPool[Connection], url: str, kwargs: dict[str, Any]
    ) -> None:
        self.pool = pool
        self.down = False
        self._url = url
        self._kwargs = kwargs | {"connect_timeout": PROBE_TIMEOUT_S}

    async def run(self, op: Operation[T], *, retry: bool) -> T:
        """`op` on a pooled connection. `retry`: the operation only reads, so a lost
        connection is replaced and the operation run once more."""
        attempts = 2 if retry else 1
        for attempt in range(attempts):
            try:
                if self.down:
                    await self._probe()
                async with self.pool.connection() as conn:
                    result = await op(conn)
            except psycopg.Error as exc:
                if not unavailable(exc):
                    log.error("[store] database error: %s", _one_line(exc))
                    raise DatabaseError(f"database error: {_one_line(exc)}") from exc
                if not self.down:
                    log.warning("[store] database unavailable: %s", _one_line(exc))
                self.down = True
                if attempt + 1 == attempts:
                    raise DatabaseUnavailable(f"database unavailable: {_one_line(exc)}") from exc
            else:
                if self.down:
                    log.info("[store] database reachable again")
                self.down = False
                return result
        raise AssertionError("unreachable")  # pragma: no cover

    async def _probe(self) -> None:
        """One connection of our own (raises while the server is down); when it works,
        test the pool's idle connections and replace the dead ones."""
        conn = await psycopg.AsyncConnection.connect(self._url, **self._kwargs)
        await conn.close()
        await self.pool.check()


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
        yield PgDatabase(pool, url, kwargs)
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
