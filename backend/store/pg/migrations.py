"""Versioned schema migrations: `sql/NNNN_name.sql`, applied in order at start, each
recorded in `schema_version`.

A small runner rather than a tool: the schema is a handful of tables, the migrations are
plain SQL files read as package data, and what is needed beyond applying them in order
(all pending ones in one transaction under an advisory lock, so workers starting together
apply them once; refusing a database newer than the code) is a few lines here, where a
tool (alembic, yoyo) would bring SQLAlchemy or its own driver and table conventions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from backend.store.errors import SchemaTooNew

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg.rows import TupleRow

    Connection = AsyncConnection[TupleRow]  # as `database.Connection` (no import back)

MIGRATION_LOCK = 0x6C68_0001  # pg_advisory_xact_lock key: one migrating process at a time
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def known_migrations() -> list[Migration]:
    """Every migration this code ships, oldest first (versions 1, 2, 3, ... with no gap)."""
    found = []
    for entry in resources.files("backend.store.pg").joinpath("sql").iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text("utf-8")))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migrations are not numbered 1..n: {[m.version for m in found]}")
    return found


def code_version() -> int:
    """The schema version this code reads and writes."""
    return len(known_migrations())


async def schema_version(conn: Connection) -> int:
    """The database's schema version (0: never migrated)."""
    cur = await conn.execute("SELECT to_regclass('schema_version') IS NOT NULL")
    row = await cur.fetchone()
    if row is None or not row[0]:
        return 0
    cur = await conn.execute("SELECT coalesce(max(version), 0) FROM schema_version")
    row = await cur.fetchone()
    return int(row[0]) if row is not None else 0


async def refuse_newer_schema(conn: Connection) -> int:
    """The database's schema version; `SchemaTooNew` if it is ahead of this code."""
    current, known = await schema_version(conn), code_version()
    if current > known:
        raise SchemaTooNew(
            f"the database's schema is version {current}, newer than this code's "
            f"({known}): upgrade the harness before using this database"
        )
    return current


async def migrate(conn: Connection) -> list[Migration]:
    """Apply the pending migrations in one transaction; the ones applied. `SchemaTooNew`
    (and nothing changed) if the database is ahead of this code."""
    migrations = known_migrations()
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            " version integer PRIMARY KEY,"
            " name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        current = await refuse_newer_schema(conn)
        pending = migrations[current:]
        for migration in pending:
            await conn.execute(migration.sql.encode())
            await conn.execute(
                "INSERT INTO schema_version (version, name) VALUES (%s, %s)",
                [migration.version, migration.name],
            )
    return pending
