"""THE storage composition root: the one place that chooses how chats, graph, jobs and traces
are stored (JSON/JSONL files under the data dir, or PostgreSQL with `LH_DATABASE_URL`) and
the only importer of `backend.store`. A learner's materials are files with an SQLite FTS5
index, or rows searched by PostgreSQL's full-text search."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from backend.core.ids import require_id
from backend.core.ports import (
    AccountStore,
    ChatFanOut,
    ChatStore,
    GraphStore,
    JobStore,
    MaterialStore,
    OwnedIds,
    ProcessLocks,
    SearchPort,
    TraceStore,
    TurnClaims,
)
from backend.store.dir_lock import DataDirInUse, DataDirLock
from backend.store.errors import (
    DatabaseError,
    DatabaseUnavailable,
    DiskError,
    SchemaTooNew,
)
from backend.store.file_account_store import FileAccountStore
from backend.store.file_material_store import FileMaterialStore
from backend.store.file_owned_ids import FileOwnedIds
from backend.store.fileops import FileOps, OsFileOps
from backend.store.json_chat_store import CHAT_CACHE_BYTES, JsonChatStore
from backend.store.json_job_store import JOB_CACHE_BYTES, JsonJobStore
from backend.store.jsonl_graph_store import JsonlGraphStore
from backend.store.jsonl_trace_store import JsonlTraceStore
from backend.store.local_coordination import LocalFanOut, LocalProcessLocks, LocalTurnClaims
from backend.store.pg.coordination import (
    LockSession,
    PgFanOut,
    PgNotices,
    PgProcessLocks,
    PgTurnClaims,
    open_coordination,
)
from backend.store.pg.database import PgDatabase, open_database
from backend.store.pg.moving import (
    DataDirUnsound,
    Moved,
    learner_roots,
    move_data_dir,
    read_accounts,
)
from backend.store.pg.pg_account_store import PgAccountStore
from backend.store.pg.pg_chat_store import PgChatStore
from backend.store.pg.pg_graph_store import PgGraphStore
from backend.store.pg.pg_job_store import PgJobStore
from backend.store.pg.pg_material_store import PgMaterialStore
from backend.store.pg.pg_owned_ids import PgOwnedIds
from backend.store.pg.pg_trace_store import PgTraceStore
from backend.store.pg.pg_verify import verify_database
from backend.store.record_cache import CacheView, RecordCache
from backend.store.verify import verify_data_dir
from shared_contracts.chat import ChatRecord
from shared_contracts.jobs import Job

__all__ = [
    "LOCAL_LEARNER",
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
    "migrate_into_database",
    "open_coordination_factory",
    "open_local_stores",
    "open_store_factory",
    "read_graph",
    "verify",
    "verify_database_at",
]


@dataclass(frozen=True)
class Stores:
    """Every storage port the app needs, built once at startup."""

    chats: ChatStore
    graph: GraphStore
    jobs: JobStore
    traces: TraceStore
    materials: MaterialStore
    search: SearchPort
    """The same learner's materials, searched (one adapter serves both)."""


def build_stores(
    data_dir: Path, *, fs: FileOps | None = None, graph: GraphStore | None = None
) -> Stores:
    """File stores under `data_dir` (created if missing; torn ledger tails and stray temp
    files are cleaned here). `fs` lets fault-injection tests replace the OS calls; `graph`
    replaces the graph store (a read-only one)."""
    fs = fs or OsFileOps()
    data_dir = Path(data_dir)
    materials = FileMaterialStore(data_dir, fs)
    return Stores(
        chats=JsonChatStore(data_dir, fs),
        graph=graph or JsonlGraphStore(data_dir, fs),
        jobs=JsonJobStore(data_dir, fs),
        traces=JsonlTraceStore(data_dir, fs),
        materials=materials,
        search=materials,
    )


def read_graph(data_dir: Path) -> GraphStore:
    """The graph ledgers under `data_dir` for reading only: nothing on disk changes (a torn
    tail is left for `harness verify` to report and the server to repair)."""
    return JsonlGraphStore(Path(data_dir), OsFileOps(), read_only=True)


def export_stores(data_dir: Path) -> Stores:
    """The stores `harness export` reads, maybe beside a server writing the same data dir:
    the graph opened read-only, so a ledger line the server is halfway through appending is
    left to it (not cut off as a torn tail, which would corrupt the line it completes)."""
    return build_stores(data_dir, graph=read_graph(data_dir))


def verify(data_dir: Path) -> list[str]:
    """The problems `harness verify` reports for `data_dir` (empty when sound); read-only:
    the local learner's files, every account's learner's (`learners/<id>/...`, named so),
    and the accounts' records."""
    problems: list[str] = []
    for learner, root in learner_roots(Path(data_dir), LOCAL_LEARNER).items():
        prefix = "" if learner == LOCAL_LEARNER else f"learners/{learner}/"
        problems += [prefix + problem for problem in verify_data_dir(root)]
    return problems + read_accounts(Path(data_dir))[1]


LOCAL_LEARNER = "local"
"""The learner of `LH_AUTH=local`: its files are `LH_DATA_DIR` itself, its rows carry this id
(account ids are drawn with a prefix, so none is ever `local`)."""


class StoreFactory(Protocol):
    """Hands out one learner's `Stores`. An adapter is bound to its learner when it is
    built (a directory, or a learner id in every row and every query), so nothing reached
    through a learner's `Stores` can name another learner's data. Cheap: the same learner
    gets the same `Stores` (their locks and caches must be one per learner and process).
    `owned` answers which ids are a learner's without calling those stores; `accounts`
    holds every account's sign-in data (`LH_AUTH=accounts`)."""

    @property
    def accounts(self) -> AccountStore: ...

    def for_learner(self, learner_id: str) -> Stores: ...

    def owned(self, learner_id: str) -> OwnedIds: ...


def learner_root(data_dir: Path, learner_id: str) -> Path:
    """A learner's directory: `data_dir` for the local learner, else `data_dir/learners/<id>`."""
    learner = require_id(learner_id, "learner id")
    return data_dir if learner == LOCAL_LEARNER else data_dir / "learners" / learner


class FileStoreFactory:
    """Learners' stores on files: `data_dir` for the local learner, `data_dir/learners/<id>/`
    for each other one. The chat and job caches are one budget shared by every learner."""

    def __init__(self, data_dir: Path, *, fs: FileOps | None = None) -> None:
        self.data_dir = Path(data_dir)
        self._fs = fs
        self._stores: dict[str, Stores] = {}
        self._chats: RecordCache[ChatRecord] = RecordCache(CHAT_CACHE_BYTES)
        self._jobs: RecordCache[Job] = RecordCache(JOB_CACHE_BYTES)
        self._accounts: FileAccountStore | None = None

    @property
    def accounts(self) -> AccountStore:
        """Opened on first use: a local-only data dir gets no `accounts/` directory."""
        if self._accounts is None:
            self._accounts = FileAccountStore(self.data_dir, self._fs)
        return self._accounts

    def root(self, learner_id: str) -> Path:
        return learner_root(self.data_dir, learner_id)

    def owned(self, learner_id: str) -> OwnedIds:
        return FileOwnedIds(self.root(learner_id))

    def for_learner(self, learner_id: str) -> Stores:
        stores = self._stores.get(learner_id)
        if stores is None:
            root, fs, ns = self.root(learner_id), self._fs or OsFileOps(), f"{learner_id}/"
            materials = FileMaterialStore(root, fs)
            stores = self._stores[learner_id] = Stores(
                chats=JsonChatStore(root, fs, cache=CacheView(self._chats, ns)),
                graph=JsonlGraphStore(root, fs),
                jobs=JsonJobStore(root, fs, cache=CacheView(self._jobs, ns)),
                traces=JsonlTraceStore(root, fs),
                materials=materials,
                search=materials,
            )
        return stores


class PgStoreFactory:
    """Learners' stores on one PostgreSQL database (one pool per process); the chat cache is
    one budget shared by every learner."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db
        self._accounts = PgAccountStore(db)
        self._stores: dict[str, Stores] = {}
        self._chats: RecordCache[ChatRecord] = RecordCache(CHAT_CACHE_BYTES)

    @property
    def accounts(self) -> AccountStore:
        return self._accounts

    def owned(self, learner_id: str) -> OwnedIds:
        return PgOwnedIds(self.db, learner_id)

    def for_learner(self, learner_id: str) -> Stores:
        stores = self._stores.get(learner_id)
        if stores is None:
            materials = PgMaterialStore(self.db, learner_id)
            stores = self._stores[learner_id] = Stores(
                chats=PgChatStore(self.db, learner_id, cache=self._chats),
                graph=PgGraphStore(self.db, learner_id),
                jobs=PgJobStore(self.db, learner_id),
                traces=PgTraceStore(self.db, learner_id),
                materials=materials,
                search=materials,
            )
        return stores


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


@dataclass(frozen=True)
class Coordination:
    """How this process shares one learner's chats with the other processes serving it:
    in one process (files) nothing is shared; on PostgreSQL a chat's turn is claimed in
    the database, the extraction run and the graph merge are locked across processes,
    and job, graph and turn frames reach the sockets of every process."""

    claims: TurnClaims
    locks: ProcessLocks
    fanout: ChatFanOut


ALONE = Coordination(LocalTurnClaims(), LocalProcessLocks(), LocalFanOut())
"""One process: today's behaviour, exactly (no call takes a scheduling point)."""


class CoordinationFactory(Protocol):
    """Hands out one learner's `Coordination` (the same one each time)."""

    def for_learner(self, learner_id: str) -> Coordination: ...


class AloneFactory:
    def for_learner(self, learner_id: str) -> Coordination:
        return ALONE


class PgCoordinationFactory:
    """Every learner's coordination over this process's locks session and notices."""

    def __init__(self, session: LockSession, notices: PgNotices) -> None:
        self.session = session
        self.notices = notices
        self._made: dict[str, Coordination] = {}

    def for_learner(self, learner_id: str) -> Coordination:
        made = self._made.get(learner_id)
        if made is None:
            learner = require_id(learner_id, "learner id")
            made = self._made[learner_id] = Coordination(
                PgTurnClaims(self.session, learner),
                PgProcessLocks(self.session, learner),
                PgFanOut(self.notices, learner),
            )
        return made


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
