"""THE storage composition root: the one place that chooses how chats, graph, jobs and traces
are stored (JSON/JSONL files under the data dir) and the only importer of `backend.store`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from backend.core.ports import ChatStore, GraphStore, JobStore, TraceStore
from backend.store.errors import AlreadyExists, DiskError
from backend.store.fileops import CrashingFileOps, FileOps, OsFileOps
from backend.store.json_chat_store import JsonChatStore
from backend.store.json_job_store import JsonJobStore
from backend.store.jsonl_graph_store import JsonlGraphStore
from backend.store.jsonl_trace_store import JsonlTraceStore
from backend.store.verify import verify_data_dir

__all__ = ["AlreadyExists", "DiskError", "Stores", "build_stores", "read_graph", "verify"]

FAULT_CRASH_ENV = "LH_FAULT_CRASH_AT"
"""TEST-ONLY: `op[@path-fragment]:n` makes the process exit abruptly at that file operation
(see `CrashingFileOps`); used by the crash-recovery suite, never set in production."""


@dataclass(frozen=True)
class Stores:
    """Every storage port the app needs, built once at startup."""

    chats: ChatStore
    graph: GraphStore
    jobs: JobStore
    traces: TraceStore


def build_stores(data_dir: Path, *, fs: FileOps | None = None) -> Stores:
    """File stores under `data_dir` (created if missing; torn ledger tails and stray temp
    files are cleaned here). `fs` lets fault-injection tests replace the OS calls."""
    fs = fs or _default_fileops()
    data_dir = Path(data_dir)
    return Stores(
        chats=JsonChatStore(data_dir, fs),
        graph=JsonlGraphStore(data_dir, fs),
        jobs=JsonJobStore(data_dir, fs),
        traces=JsonlTraceStore(data_dir, fs),
    )


def read_graph(data_dir: Path) -> GraphStore:
    """The graph ledgers under `data_dir` for reading only: nothing on disk changes (a torn
    tail is left for `harness verify` to report and the server to repair)."""
    return JsonlGraphStore(Path(data_dir), _default_fileops(), read_only=True)


def _default_fileops() -> FileOps:
    """The OS; wrapped in the test-only crash hook when `LH_FAULT_CRASH_AT` is set."""
    spec = os.environ.get(FAULT_CRASH_ENV, "").strip()
    return CrashingFileOps.from_spec(spec) if spec else OsFileOps()


def verify(data_dir: Path) -> list[str]:
    """The problems `harness verify` reports for `data_dir` (empty when sound); read-only."""
    return verify_data_dir(Path(data_dir))
