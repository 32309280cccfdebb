"""A learner's data as records, encoded into archive members and decoded and checked back.

Decoding uses the contracts' own Structs (one typed `Decoder` per kind), so an archive holds
exactly what the stores accept. The checks are the ones `harness verify` makes of a data
dir, applied before anything is written: ids unique per kind, every checkpoint and trace
about a chat the archive holds, no checkpoint ahead of its chat.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import msgspec

from backend.core.errors import DuplicateRecordId, InvalidArchiveRecord
from backend.core.portability.layout import (
    CHATS,
    JOBS,
    LEDGERS,
    MATERIALS,
    MemberRef,
    ledger_member,
    material_original_member,
    material_text_member,
    trace_member,
)
from backend.core.ports import LEDGER_TYPES, LedgerBatch
from shared_contracts.chat import ChatRecord
from shared_contracts.jobs import Job
from shared_contracts.materials import Material, MaterialText
from shared_contracts.trace import AnyTraceEvent

ID_LEDGERS = ("propositions", "edges", "events")
"""Ledgers whose lines carry an id that must be unique (as `harness verify` checks)."""


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StoredMaterial:
    """One uploaded document whole: its record, its text (pages and chunks: the search
    index is rebuilt from them) and the bytes that were uploaded."""

    material: Material
    text: MaterialText
    original: bytes

    @property
    def id(self) -> str:
        return self.material.id


@dataclass(slots=True)
class LearnerData:
    """Everything an archive carries of one learner. `traces` maps a chat id to its events
    (only chats that have a trace). A new kind of record is a field here, its members in
    `layout` and `encode_members`, its decoding in `MemberDecoder`, its checks in
    `check_records`, its merge rule in `merge.plan_import`, and its port's reads and writes
    in `backend.portability.archive`."""

    chats: list[ChatRecord] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    ledgers: LedgerBatch = field(default_factory=LedgerBatch)
    traces: dict[str, list[AnyTraceEvent]] = field(default_factory=dict)
    materials: list[StoredMaterial] = field(default_factory=list)

    def is_empty(self) -> bool:
        held = self.chats or self.jobs or self.traces or self.materials
        return not held and self.ledgers.is_empty()

    def counts(self) -> dict[str, int]:
        """Records per kind, as the manifest states them."""
        return {
            "chats": len(self.chats),
            "jobs": len(self.jobs),
            **{name: len(getattr(self.ledgers, name)) for name in LEDGERS},
            "traces": len(self.traces),
            "trace_events": sum(len(events) for events in self.traces.values()),
            "materials": len(self.materials),
        }


@dataclass(frozen=True, slots=True)
class EncodedMember:
    name: str
    data: bytes
    records: int


def _lines(encoder: msgspec.json.Encoder, items: Iterable[Any]) -> tuple[bytes, int]:
    buf = bytearray()
    count = 0
    for item in items:
        encoder.encode_into(item, buf, -1)
        buf.extend(b"\n")
        count += 1
    return bytes(buf), count


def encode_members(data: LearnerData) -> list[EncodedMember]:
    """The archive's members for `data`, in the order they are written (ledgers always, so
    an archive of an empty graph still names every ledger)."""
    encoder = msgspec.json.Encoder()
    out = [
        EncodedMember(CHATS, *_lines(encoder, data.chats)),
        EncodedMember(JOBS, *_lines(encoder, data.jobs)),
    ]
    for name in LEDGERS:
        lines = getattr(data.ledgers, name)
        out.append(EncodedMember(ledger_member(name), *_lines(encoder, lines)))
    for chat_id in sorted(data.traces):
        events = data.traces[chat_id]
        out.append(EncodedMember(trace_member(chat_id), *_lines(encoder, events)))
    out.append(EncodedMember(MATERIALS, *_lines(encoder, (m.material for m in data.materials))))
    for stored in data.materials:
        out.append(EncodedMember(material_text_member(stored.id), encoder.encode(stored.text), 1))
        out.append(EncodedMember(material_original_member(stored.id), stored.original, 1))
    return out


def decode_lines(decoder: msgspec.json.Decoder[T], data: bytes, member: str) -> list[T]:
    """Every line of `member` as a `T`; `InvalidArchiveRecord` naming the first bad line."""
    try:
        return decoder.decode_lines(data)
    except msgspec.DecodeError:
        pass
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            decoder.decode(line)
        except msgspec.DecodeError as exc:
            raise InvalidArchiveRecord(f"{member} line {number}: {exc}") from None
    raise InvalidArchiveRecord(f"{member}: does not decode as JSON Lines")


class MemberDecoder:
    """Decodes members into one `LearnerData` (typed decoders built once)."""

    def __init__(self) -> None:
        self._chats = msgspec.json.Decoder(ChatRecord)
        self._jobs = msgspec.json.Decoder(Job)
        self._ledgers: dict[str, msgspec.json.Decoder[Any]] = {
            name: msgspec.json.Decoder(t) for name, t in LEDGER_TYPES.items()
        }
        self._trace = msgspec.json.Decoder(AnyTraceEvent)
        self._materials = msgspec.json.Decoder(Material)
        self._text = msgspec.json.Decoder(MaterialText)
        self.data = LearnerData()
        self._listed: list[Material] = []
        self._texts: dict[str, MaterialText] = {}
        self._originals: dict[str, bytes] = {}

    def add(self, ref: MemberRef, name: str, raw: bytes) -> int:
        """Decode member `name` (`ref` says what it holds) into `data`; its record count."""
        match ref.kind:
            case "chats":
                self.data.chats = decode_lines(self._chats, raw, name)
                return len(self.data.chats)
            case "jobs":
                self.data.jobs = decode_lines(self._jobs, raw, name)
                return len(self.data.jobs)
            case "ledger":
                lines = decode_lines(self._ledgers[ref.key], raw, name)
                setattr(self.data.ledgers, ref.key, lines)
                return len(lines)
            case "trace":
                events = decode_lines(self._trace, raw, name)
                if events:
                    self.data.traces[ref.key] = events
                return len(events)
            case "materials":
                self._listed = decode_lines(self._materials, raw, name)
                return len(self._listed)
            case "material_text":
                try:
                    self._texts[ref.key] = self._text.decode(raw)
                except msgspec.DecodeError as exc:
                    raise InvalidArchiveRecord(f"{name}: {exc}") from None
                return 1
            case "material_original":
                self._originals[ref.key] = raw
                return 1

    def finish(self) -> LearnerData:
        """The decoded data, each material with its text and original (`InvalidArchiveRecord`
        for a material without one, or a text or original of no listed material)."""
        _unique(MATERIALS, self._listed)
        materials = []
        for material in self._listed:
            text = self._texts.pop(material.id, None)
            original = self._originals.pop(material.id, None)
            if text is None or original is None:
                missing = material_text_member if text is None else material_original_member
                raise InvalidArchiveRecord(
                    f"material {material.id!r} has no {missing(material.id)} in the archive"
                )
            materials.append(StoredMaterial(material, text, original))
        for stray in sorted({*self._texts, *self._originals}):
            raise InvalidArchiveRecord(
                f"materials/{stray}/: the files of a material {MATERIALS} does not list"
            )
        self.data.materials = materials
        return self.data


def _unique(kind: str, records: Sequence[_HasId]) -> None:
    seen: set[str] = set()
    for record in records:
        if record.id in seen:
            raise DuplicateRecordId(f"{kind}: id {record.id!r} appears twice")
        seen.add(record.id)


def check_records(data: LearnerData) -> None:
    """The invariants `harness verify` holds a data dir to, for an archive's records."""
    _unique(CHATS, data.chats)
    _unique(JOBS, data.jobs)
    for name in ID_LEDGERS:
        _unique(ledger_member(name), getattr(data.ledgers, name))
    messages = {chat.id: len(chat.messages) for chat in data.chats}
    for checkpoint in data.ledgers.sessions:
        held = messages.get(checkpoint.chat_id)
        if held is None:
            raise InvalidArchiveRecord(
                f"{ledger_member('sessions')}: a checkpoint of chat {checkpoint.chat_id!r},"
                " which the archive does not hold"
            )
        if checkpoint.folded_at > held:
            raise InvalidArchiveRecord(
                f"{ledger_member('sessions')}: the checkpoint of chat {checkpoint.chat_id!r}"
                f" is ahead of it (folded_at {checkpoint.folded_at} > {held} messages)"
            )
    for chat_id in data.traces:
        if chat_id not in messages:
            raise InvalidArchiveRecord(
                f"{trace_member(chat_id)}: a trace of a chat the archive does not hold"
            )
    for stored in data.materials:
        _check_material(stored)


def _check_material(stored: StoredMaterial) -> None:
    """The original is the upload the record describes (its size and sha256, when kept)."""
    material, original = stored.material, stored.original
    if material.size and len(original) != material.size:
        raise InvalidArchiveRecord(
            f"{material_original_member(material.id)} holds {len(original)} bytes, the"
            f" material's record says {material.size}"
        )
    if material.sha256 and hashlib.sha256(original).hexdigest() != material.sha256:
        raise InvalidArchiveRecord(
            f"{material_original_member(material.id)} is not the upload its record describes"
            " (sha256)"
        )
