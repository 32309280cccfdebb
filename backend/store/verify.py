"""`harness verify`: a read-only integrity check of a data dir; returns the problems found.
`read_data_dir` is the same strict read, also handing back what it decoded (what
`harness migrate` copies)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from backend.core.errors import CorruptRecord, HarnessError
from backend.core.ids import is_valid_id
from backend.core.ports import LEDGER_TYPES
from backend.store.fileops import FileOps, OsFileOps
from backend.store.invariants import (
    HasId,
    LearnerData,
    StoredMaterial,
    check_all,
    material_problems,
)
from backend.store.jsonl import complete_prefix, decode_lines
from backend.store.material_files import MATERIAL_FILE, ORIGINAL_SUFFIX, TEXT_FILE
from shared_contracts.chat import ChatRecord
from shared_contracts.jobs import Job
from shared_contracts.materials import Material, MaterialText
from shared_contracts.trace import AnyTraceEvent

R = TypeVar("R", bound=HasId)


def verify_data_dir(root: Path, fs: FileOps | None = None) -> list[str]:
    """Every problem in `root` as one human-readable line, each once, its file named
    relative to `root` ("graph/edges.jsonl: …"); an empty list means sound.

    Strictly decodes every chat, job and ledger line; checks ledger ids are unique, every
    checkpoint's `folded_at` is within its chat, and no tool part is orphaned (pending with
    its job terminal or missing, or never started); every material's record and text decode
    and each chunk is its span of its page. Never writes.
    """
    return read_data_dir(root, fs)[1]


def read_data_dir(root: Path, fs: FileOps | None = None) -> tuple[LearnerData, list[str]]:
    """(what `root` holds that decodes, the problems `verify_data_dir` reports); never
    writes. A trace's undecodable last line (a torn tail the store tolerates) is left out."""
    fs = fs or OsFileOps()
    problems: list[str] = []
    data = LearnerData(
        chats=_records(fs, os.path.join(root, "chats"), ChatRecord, problems),
        jobs=_records(fs, os.path.join(root, "jobs"), Job, problems),
        ledgers={
            name: _ledger(fs, os.path.join(root, "graph", f"{name}.jsonl"), t, problems)
            for name, t in LEDGER_TYPES.items()
        },
    )
    problems += check_all(lambda name: f"graph/{name}.jsonl", data.chats, data.jobs, data.ledgers)
    data.traces = _traces(fs, os.path.join(root, "traces"), problems)
    data.materials = _materials(fs, os.path.join(root, "materials"), problems)
    prefix = os.path.join(root, "")
    return data, list(dict.fromkeys(p.replace(prefix, "") for p in problems))


def _names(fs: FileOps, directory: str, suffix: str) -> list[str]:
    try:
        return sorted(n for n in fs.listdir(directory) if n.endswith(suffix))
    except FileNotFoundError:
        return []


def _records(fs: FileOps, directory: str, type_: type[R], problems: list[str]) -> dict[str, R]:
    decoder = msgspec.json.Decoder(type_)
    out: dict[str, R] = {}
    for name in _names(fs, directory, ".json"):
        path = os.path.join(directory, name)
        try:
            record = decoder.decode(fs.read(path))
        except (msgspec.DecodeError, OSError) as exc:
            problems.append(f"{path}: does not decode: {exc}")
            continue
        if f"{record.id}.json" != name:
            problems.append(f"{path}: holds id {record.id!r}")
        out[record.id] = record
    return out


def _ledger(fs: FileOps, path: str, type_: type[msgspec.Struct], problems: list[str]) -> list[Any]:
    try:
        data = fs.read(path)
    except FileNotFoundError:
        return []
    except OSError as exc:
        problems.append(f"{path}: unreadable: {exc}")
        return []
    end = complete_prefix(data)
    if end < len(data):
        problems.append(f"{path}: torn tail of {len(data) - end} bytes (cut when the store opens)")
    try:
        return decode_lines(msgspec.json.Decoder(type_), data[:end], path, 1)
    except CorruptRecord as exc:
        problems.append(f"{path}:{exc.line}: does not decode: {exc.detail}")
        return []


def _traces(fs: FileOps, directory: str, problems: list[str]) -> dict[str, list[AnyTraceEvent]]:
    decoder = msgspec.json.Decoder(AnyTraceEvent)
    out: dict[str, list[AnyTraceEvent]] = {}
    for name in _names(fs, directory, ".jsonl"):
        path = os.path.join(directory, name)
        try:
            events = _trace(fs, decoder, path)
        except CorruptRecord as exc:
            problems.append(f"{path}:{exc.line}: does not decode: {exc.detail}")
        except (HarnessError, OSError) as exc:
            problems.append(f"{path}: {exc}")
        else:
            if events:  # an empty log is no log (what a table holds for it)
                out[name.removesuffix(".jsonl")] = events
    return out


def _trace(
    fs: FileOps, decoder: msgspec.json.Decoder[AnyTraceEvent], path: str
) -> list[AnyTraceEvent]:
    data = fs.read(path)
    body = data[: complete_prefix(data)]
    try:
        return decode_lines(decoder, body, path, 1)
    except CorruptRecord:
        # The trace store tolerates a bad last line, so only the lines before it count.
        return decode_lines(decoder, body[: complete_prefix(body[:-1])], path, 1)


def _materials(fs: FileOps, directory: str, problems: list[str]) -> dict[str, StoredMaterial]:
    """Each material whole (record, text, the uploaded bytes), checked (`material_problems`)."""
    try:
        names = sorted(n for n in fs.listdir(directory) if is_valid_id(n))
    except FileNotFoundError:
        return {}
    out = {}
    for name in names:
        where = os.path.join(directory, name)
        try:
            material = msgspec.json.decode(
                fs.read(os.path.join(where, MATERIAL_FILE)), type=Material
            )
            text = msgspec.json.decode(fs.read(os.path.join(where, TEXT_FILE)), type=MaterialText)
            original = fs.read(os.path.join(where, f"original.{ORIGINAL_SUFFIX[material.kind]}"))
        except (msgspec.DecodeError, OSError) as exc:
            problems.append(f"{where}: does not decode: {exc}")
            continue
        if material.id != name:
            problems.append(f"{where}: holds id {material.id!r}")
        problems += material_problems(where, material, text)
        out[name] = StoredMaterial(material, text, original)
    return out
