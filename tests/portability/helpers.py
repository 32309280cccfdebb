"""Data dirs to export (copies of the goldens), archives to tamper with, and a digest of
every file of a data dir to prove an import that failed wrote nothing."""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import sqlite3
import zipfile
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import anyio
import msgspec

from backend.core.graph import GraphState, derive_snapshot, fold
from backend.core.portability.layout import LEDGERS, MANIFEST
from backend.core.portability.manifest import build_manifest, encode_manifest
from backend.core.portability.records import EncodedMember, LearnerData
from backend.core.ports import LedgerCursor
from backend.ingest import read_document
from backend.portability.archive import export_archive, import_archive, read_archive
from backend.server.stores import build_stores
from shared_contracts.archive import ArchiveManifest
from tests.fakes import FixedClock

GOLDEN = Path(__file__).parents[1] / "golden"
GOLDENS = sorted(p.name for p in GOLDEN.iterdir() if (p / "chats").is_dir())


def golden_copy(name: str, into: Path) -> Path:
    shutil.copytree(GOLDEN / name, into)
    return into


LESSON = b"""# Fractions

A fraction names part of a whole. The denominator counts the equal parts.

## Adding

To add fractions with the same denominator, add the numerators and keep the denominator.
"""


def add_material(data_dir: Path, material_id: str = "mat-0001", data: bytes = LESSON) -> None:
    """A learner's uploaded document, stored through the port as `POST /api/materials` does."""
    doc = read_document(data, "fractions.md", max_bytes=1_000_000)
    material = doc.as_material(
        material_id, data, filename="fractions.md", created_at=datetime(2026, 1, 2, tzinfo=UTC)
    )
    anyio.run(build_stores(data_dir).materials.add, material, doc.text, data)


SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def digest(data_dir: Path) -> dict[str, str]:
    """Every file under `data_dir` (relative path → sha256; directories too, as '').

    The materials' search index is SQLite's: opening it (as every materials store does)
    may checkpoint its write-ahead log into the main file and leaves -wal/-shm files, so
    an index is compared by its rows (a dump), not its bytes."""
    if not data_dir.exists():
        return {}
    out = {}
    for path in sorted(data_dir.rglob("*")):
        rel = str(path.relative_to(data_dir))
        if rel.endswith(SQLITE_SIDE_FILES):
            continue
        if path.suffix == ".sqlite3":
            out[rel] = _sqlite_rows(path)
        else:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
    return out


def _sqlite_rows(path: Path) -> str:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        dump = "\n".join(db.iterdump())
    return hashlib.sha256(dump.encode()).hexdigest()


def snapshot_of(stores):
    """The graph as `GET /api/graph` derives it (every line folded, no particular moment)."""

    async def read():
        ledgers, _ = await stores.graph.read_since(LedgerCursor())
        return derive_snapshot(fold(GraphState(), ledgers)), ledgers

    return anyio.run(read)


def export_bytes(data_dir: Path, *, traces: bool = True) -> bytes:
    async def run() -> bytes:
        out = io.BytesIO()
        await export_archive(build_stores(data_dir), out, clock=FixedClock(), traces=traces)
        return out.getvalue()

    return anyio.run(run)


def import_bytes(archive: bytes, data_dir: Path, *, merge: bool = False):
    data = read_archive(io.BytesIO(archive))

    async def run():
        return await import_archive(build_stores(data_dir), data, merge=merge)

    return anyio.run(run)


def members(archive: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def manifest_of(archive: bytes) -> ArchiveManifest:
    return msgspec.json.decode(members(archive)[MANIFEST], type=ArchiveManifest)


def _counts(files: dict[str, bytes]) -> dict[str, int]:
    lines = {name: data.count(b"\n") for name, data in files.items()}
    traces = [n for name, n in lines.items() if name.startswith("traces/") and n]
    return {
        "chats": lines.get("chats.jsonl", 0),
        "jobs": lines.get("jobs.jsonl", 0),
        **{name: lines.get(f"graph/{name}.jsonl", 0) for name in LEDGERS},
        "traces": len(traces),
        "trace_events": sum(traces),
        "materials": lines.get("materials.jsonl", 0),
    }


def _records(name: str, data: bytes) -> int:
    return 1 if name.startswith("materials/") else data.count(b"\n")


def rezip(files: dict[str, bytes], *, restate: bool = True) -> bytes:
    """A zip of `files`; with `restate`, its manifest re-made to describe them (so a check
    past the manifest's is what refuses the archive)."""
    files = dict(files)
    if restate:
        old = msgspec.json.decode(files.pop(MANIFEST), type=ArchiveManifest)
        listed = [EncodedMember(name, data, _records(name, data)) for name, data in files.items()]
        manifest = build_manifest(
            listed, _counts(files), created_at=old.created_at, traces=old.traces
        )
        files = {MANIFEST: encode_manifest(manifest), **files}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return out.getvalue()


_IDS = re.compile(rb"\b(chat|node|edge|event|job|msg|run|mat)-(\d{4})\b")


def renamed(archive: bytes, tag: bytes = b"b") -> bytes:
    """The same archive with every sequential id renamed (`chat-0001` → `chat-b0001`), as
    if recorded on another machine: member names, records and the manifest's sha256s."""
    files = {
        _IDS.sub(rb"\1-" + tag + rb"\2", name.encode()).decode(): _IDS.sub(
            rb"\1-" + tag + rb"\2", data
        )
        for name, data in members(archive).items()
    }
    return rezip(files)


def decoded(archive: bytes) -> LearnerData:
    return read_archive(io.BytesIO(archive))
