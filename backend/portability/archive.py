"""A learner's archive: written from the ports, read and checked whole, then imported.

`export_archive` reads the ledgers first, then chats, jobs and traces: records only grow,
so whatever a running server adds meanwhile, no checkpoint is ahead of the chat the
archive holds and no tool part waits for a job it lacks.

`read_archive` checks everything before an import writes anything: the zip's names and
sizes (`SafeZip`), the manifest's version, every member against its sha256, size and count,
every record against its Struct, and the records' invariants. `import_archive` then plans
(`core.portability.merge`: a conflict is found before the first write) and writes through
the ports: materials, jobs, chats, traces, and the graph last (its checkpoints last of all), so an
import cut short is completed by importing the same archive again with `merge`.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Protocol

import anyio.to_thread

from backend.core.portability.layout import MANIFEST, ArchiveLimits, locate
from backend.core.portability.manifest import (
    build_manifest,
    check_count,
    check_member,
    check_totals,
    decode_manifest,
    encode_manifest,
    listed,
)
from backend.core.portability.merge import plan_import
from backend.core.portability.records import (
    LearnerData,
    MemberDecoder,
    StoredMaterial,
    check_records,
    encode_members,
)
from backend.core.ports import (
    ChatStore,
    Clock,
    GraphStore,
    JobStore,
    LedgerCursor,
    MaterialStore,
    TraceStore,
)
from backend.portability.zip_reader import SafeZip
from shared_contracts.archive import ArchiveManifest


class LearnerStores(Protocol):
    """One learner's ports (the server's `Stores` is one)."""

    @property
    def chats(self) -> ChatStore: ...

    @property
    def graph(self) -> GraphStore: ...

    @property
    def jobs(self) -> JobStore: ...

    @property
    def traces(self) -> TraceStore: ...

    @property
    def materials(self) -> MaterialStore: ...


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import read and what it wrote (a merge skips what is already there)."""

    read: dict[str, int]
    written: dict[str, int]
    merged: bool


async def load_learner(stores: LearnerStores, *, traces: bool = True) -> LearnerData:
    """Everything of the learner's, oldest chat first (the ledgers read first)."""
    ledgers, _ = await stores.graph.read_since(LedgerCursor())
    summaries = await stores.chats.list_summaries()
    ordered = sorted(summaries, key=lambda s: (s.created_at, s.id))
    chats = [await stores.chats.get(summary.id) for summary in ordered]
    jobs = await stores.jobs.list_all()
    data = LearnerData(chats=chats, jobs=jobs, ledgers=ledgers)
    data.materials = await _materials(stores.materials)
    if traces:
        for chat in chats:
            events = await stores.traces.read(chat.id)
            if events:
                data.traces[chat.id] = events
    return data


async def _materials(store: MaterialStore, only: set[str] | None = None) -> list[StoredMaterial]:
    """The learner's materials whole, oldest first (`only`: just these ids)."""
    listed = [m for m in await store.list_all() if only is None or m.id in only]
    listed.sort(key=lambda m: (m.created_at.isoformat() if m.created_at else "", m.id))
    return [StoredMaterial(m, await store.text(m.id), await store.original(m.id)) for m in listed]


async def export_archive(
    stores: LearnerStores, out: IO[bytes], *, clock: Clock, traces: bool = True
) -> ArchiveManifest:
    """Write the learner's archive to `out` (a binary file); its manifest. Encoding and
    compressing run in a worker thread: a server's event loop is not held by them."""
    data = await load_learner(stores, traces=traces)
    created_at = clock.now()
    return await anyio.to_thread.run_sync(
        lambda: write_archive(data, out, created_at=created_at, traces=traces)
    )


def write_archive(
    data: LearnerData, out: IO[bytes], *, created_at: datetime, traces: bool
) -> ArchiveManifest:
    members = encode_members(data)
    manifest = build_manifest(members, data.counts(), created_at=created_at, traces=traces)
    stamp = _zip_time(created_at)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        zf.writestr(_entry(MANIFEST, stamp), encode_manifest(manifest))
        for member in members:
            zf.writestr(_entry(member.name, stamp), member.data)
    return manifest


def _zip_time(at: datetime) -> tuple[int, int, int, int, int, int]:
    return (max(at.year, 1980), at.month, at.day, at.hour, at.minute, at.second)


def _entry(name: str, stamp: tuple[int, int, int, int, int, int]) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=stamp)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o100644 << 16  # a regular file, rw-r--r--
    return info


def read_archive(source: IO[bytes], limits: ArchiveLimits | None = None) -> LearnerData:
    """The archive's records, once every check has passed (see the module docstring)."""
    limits = limits or ArchiveLimits()
    archive = SafeZip(source, limits)
    try:
        manifest = decode_manifest(archive.read(MANIFEST, cap=limits.max_manifest_bytes))
        entries = listed(manifest, (name for name in archive.infos if name != MANIFEST))
        decoder = MemberDecoder()
        for name, entry in entries.items():
            raw = archive.read(name)
            check_member(entry, raw)
            check_count(entry, decoder.add(locate(name), name, raw))
    finally:
        archive.close()
    data = decoder.finish()
    check_totals(manifest, data.counts())
    check_records(data)
    return data


async def _load_local(
    stores: LearnerStores, incoming: LearnerData
) -> tuple[LearnerData, dict[str, int]]:
    """What an import must compare with: every job and ledger line, and the chats, traces
    and materials the archive also holds; and how many chats and materials the store
    holds in all."""
    ledgers, _ = await stores.graph.read_since(LedgerCursor())
    held = {summary.id for summary in await stores.chats.list_summaries()}
    wanted = [chat.id for chat in incoming.chats if chat.id in held]
    local = LearnerData(
        chats=[await stores.chats.get(chat_id) for chat_id in wanted],
        jobs=await stores.jobs.list_all(),
        ledgers=ledgers,
    )
    held_materials = {m.id for m in await stores.materials.list_all()}
    shared = held_materials & {m.id for m in incoming.materials}
    local.materials = await _materials(stores.materials, shared)
    for chat_id in incoming.traces:
        events = await stores.traces.read(chat_id)
        if events:
            local.traces[chat_id] = events
    return local, {"chats": len(held), "materials": len(held_materials)}


async def import_archive(
    stores: LearnerStores, incoming: LearnerData, *, merge: bool = False
) -> ImportReport:
    """Write `incoming` (from `read_archive`) through the ports; refused with
    `ImportRefused` into a store that holds data unless `merge`, and with `ImportConflict`
    before any write when the same id holds different content on the two sides."""
    local, held = await _load_local(stores, incoming)
    plan = plan_import(local, incoming, merge=merge, held=held)
    for stored in plan.materials:
        await stores.materials.add(stored.material, stored.text, stored.original)
    for job in plan.jobs:
        await stores.jobs.save(job)
    for chat in plan.chats:
        await stores.chats.create(chat)
    for chat_id, events in plan.traces.items():
        await stores.traces.append(chat_id, events)
    await stores.graph.append(plan.ledgers)
    return ImportReport(read=incoming.counts(), written=plan.counts(), merged=plan is not incoming)
