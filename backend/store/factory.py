"""One learner's stores (`Stores`) and coordination (`Coordination`), and the file
adapters' choices: a learner's files (`learner_root`), every learner's stores on files
(`FileStoreFactory`), one process coordinating with no other (`ALONE`). The PostgreSQL
ones are `backend.store.pg.factory`; `backend.server.stores` chooses between them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backend.core.ids import require_id
from backend.core.ports import (
    AccountStore,
    ChatFanOut,
    ChatStore,
    GraphStore,
    JobLocks,
    JobStore,
    MaterialStore,
    OwnedIds,
    ProcessLocks,
    RateLimits,
    SearchPort,
    TraceStore,
    TurnClaims,
)
from backend.core.rate_limits import MemoryRateLimits
from backend.store.file_account_store import FileAccountStore
from backend.store.file_material_store import FileMaterialStore
from backend.store.file_owned_ids import FileOwnedIds
from backend.store.fileops import FileOps, OsFileOps
from backend.store.json_chat_store import JsonChatStore
from backend.store.json_job_store import JOB_CACHE_BYTES, JsonJobStore
from backend.store.jsonl_graph_store import JsonlGraphStore
from backend.store.jsonl_trace_store import JsonlTraceStore
from backend.store.local_coordination import (
    LocalFanOut,
    LocalJobLocks,
    LocalProcessLocks,
    LocalTurnClaims,
)
from backend.store.record_cache import CHAT_CACHE_BYTES, CacheView, RecordCache
from shared_contracts.chat import ChatRecord
from shared_contracts.jobs import Job

LOCAL_LEARNER = "local"
"""The learner of `LH_AUTH=local`: its files are `LH_DATA_DIR` itself, its rows carry this id
(account ids are drawn with a prefix, so none is ever `local`)."""


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
        self._rate_limits = MemoryRateLimits()

    @property
    def accounts(self) -> AccountStore:
        """Opened on first use: a local-only data dir gets no `accounts/` directory."""
        if self._accounts is None:
            self._accounts = FileAccountStore(self.data_dir, self._fs)
        return self._accounts

    @property
    def rate_limits(self) -> RateLimits:
        """Sign-in limits in this process's memory: one process serves a data dir."""
        return self._rate_limits

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


@dataclass(frozen=True)
class Coordination:
    """How this process shares one learner's chats with the other processes serving it:
    in one process (files) nothing is shared; on PostgreSQL a chat's turn is claimed in
    the database, the extraction run and the graph merge are locked across processes,
    job, graph and turn frames reach the sockets of every process, and each job is
    locked by the process running it (a dead process's jobs are found unheld)."""

    claims: TurnClaims
    locks: ProcessLocks
    fanout: ChatFanOut
    jobs: JobLocks


ALONE = Coordination(LocalTurnClaims(), LocalProcessLocks(), LocalFanOut(), LocalJobLocks())
"""One process: today's behaviour, exactly (no call takes a scheduling point)."""


class AloneFactory:
    def for_learner(self, learner_id: str) -> Coordination:
        return ALONE
