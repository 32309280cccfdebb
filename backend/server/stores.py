"""THE storage composition root: the one place that chooses how chats, graph, jobs and traces
are stored (JSON/JSONL files under the data dir, or PostgreSQL with `LH_DATABASE_URL`) and
the only importer of `backend.store`. A learner's materials are files with an SQLite FTS5
index, or rows searched by PostgreSQL's full-text search."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Protocol

from backend.core.ports import AccountStore, OwnedIds, RateLimits
from backend.store.dir_lock import DataDirInUse, DataDirLock
from backend.store.errors import DatabaseError, DatabaseUnavailable, DiskError, SchemaTooNew
from backend.store.factory import (
    LOCAL_LEARNER,
    AloneFactory,
    Coordination,
    FileStoreFactory,
    Stores,
    build_stores,
    export_stores,
    learner_root,
    read_graph,
)
from backend.store.file_account_store import AccountReader
from backend.store.pg.coordination import open_coordination
from backend.store.pg.database import open_database
from backend.store.pg.factory import PgCoordinationFactory, PgStoreFactory
from backend.store.pg.moving import (
    DataDirUnsound,
    Moved,
    learner_roots,
    move_data_dir,
    read_accounts,
)
from backend.store.pg.pg_verify import verify_database
from backend.store.verify import verify_data_dir

__all__ = [
    "LOCAL_LEARNER",
    "AccountReader",
    "Coordination",
    "CoordinationFactory",
    "DataDirInUse",
    "DataDirLock",
    "DataDirUnsound",
    "DatabaseError",
    "DatabaseUnavailable",
    "DiskError",
    "FileStoreFactory",
    "Moved",
    "PgStoreFactory",
    "SchemaTooNew",
    "StoreFactory",
    "Stores",
    "accounts_in",
    "build_stores",
    "check_database",
    "export_stores",
    "learner_root",
    "migrate_into_database",
    "open_coordination_factory",
    "open_local_stores",
    "open_store_factory",
    "read_graph",
    "verify",
    "verify_database_at",
]


def verify(data_dir: Path) -> list[str]:
    """The problems `harness verify` reports for `data_dir` (empty when sound); read-only:
    the local learner's files, every account's learner's (`learners/<id>/...`, named so),
    and the accounts' records."""
    problems: list[str] = []
    for learner, root in learner_roots(Path(data_dir), LOCAL_LEARNER).items():
        prefix = "" if learner == LOCAL_LEARNER else f"learners/{learner}/"
        problems += [prefix + problem for problem in verify_data_dir(root)]
    return problems + read_accounts(Path(data_dir))[1]


class StoreFactory(Protocol):
    """Hands out one learner's `Stores`. An adapter is bound to its learner when it is
    built (a directory, or a learner id in every row and every query), so nothing reached
    through a learner's `Stores` can name another learner's data. Cheap: the same learner
    gets the same `Stores` (their locks and caches must be one per learner and process).
    `owned` answers which ids are a learner's without calling those stores; `accounts` and
    `rate_limits` hold every account's sign-in data and limits (`LH_AUTH=accounts`)."""

    @property
    def accounts(self) -> AccountStore: ...

    @property
    def rate_limits(self) -> RateLimits: ...

    def for_learner(self, learner_id: str) -> Stores: ...

    def owned(self, learner_id: str) -> OwnedIds: ...


@asynccontextmanager
async def open_store_factory(
    data_dir: Path, database_url: str | None = None, *, migrate_schema: bool = True
) -> AsyncIterator[StoreFactory]:
    """Where every learner's data lives, for the block: files under `data_dir`, or (with a
    `database_url`) PostgreSQL, its schema migrated first (`SchemaTooNew` if the database
    is ahead of this code, `DatabaseUnavailable` if it cannot be reached; a reading command
    passes `migrate_schema=False`)."""
    if not database_url:
        yield FileStoreFactory(data_dir)
        return
    async with open_database(database_url, migrate_schema=migrate_schema) as db:
        yield PgStoreFactory(db)


@asynccontextmanager
async def open_local_stores(
    data_dir: Path, database_url: str | None = None, *, migrate_schema: bool = True
) -> AsyncIterator[Stores]:
    """The local learner's stores (`LH_AUTH=local`), as `open_store_factory` opens them."""
    async with open_store_factory(data_dir, database_url, migrate_schema=migrate_schema) as f:
        yield f.for_learner(LOCAL_LEARNER)


async def migrate_into_database(data_dir: Path, database_url: str) -> list[Moved]:
    """`harness migrate --to URL`: every learner's files under `data_dir` copied into the
    database (migrated first), read back equal and verified; the files are only read."""
    async with open_database(database_url) as db:
        return await move_data_dir(Path(data_dir), db, LOCAL_LEARNER)


def accounts_in(data_dir: Path) -> int:
    """How many accounts (`LH_AUTH=accounts`) the files hold: what `harness migrate` moves."""
    return len(read_accounts(Path(data_dir))[0])


async def verify_database_at(database_url: str) -> list[str]:
    """The problems `harness verify` reports for the database (empty when sound); read-only
    (an outdated schema is reported, not migrated)."""
    async with open_database(database_url, migrate_schema=False, min_size=1, max_size=2) as db:
        return await verify_database(db)


async def check_database(database_url: str) -> None:
    """Reach the database and migrate its schema (what the server does as it starts), so a
    command can refuse to start with one line: `DatabaseUnavailable`, `SchemaTooNew`."""
    async with open_database(database_url, min_size=1, max_size=1):
        pass


class CoordinationFactory(Protocol):
    """Hands out one learner's `Coordination` (the same one each time)."""

    def for_learner(self, learner_id: str) -> Coordination: ...


@asynccontextmanager
async def open_coordination_factory(
    database_url: str | None,
) -> AsyncIterator[CoordinationFactory]:
    """Coordination with the other processes for the block: none for files, advisory
    locks and LISTEN/NOTIFY on the database at `database_url` (its connections are
    opened on first use and replaced when lost)."""
    if not database_url:
        yield AloneFactory()
        return
    async with open_coordination(database_url) as (session, notices):
        yield PgCoordinationFactory(session, notices)
