"""`harness verify`: a read-only integrity check of a data dir; returns the problems found."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import msgspec

from backend.core.errors import CorruptRecord, HarnessError
from backend.store.fileops import FileOps, OsFileOps
from backend.store.jsonl import complete_prefix, decode_lines
from backend.store.jsonl_graph_store import LEDGER_TYPES
from shared_contracts.chat import ChatRecord, ToolPart
from shared_contracts.graph import SessionCheckpoint
from shared_contracts.jobs import TERMINAL_JOB_STATUSES, Job
from shared_contracts.trace import AnyTraceEvent


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


R = TypeVar("R", bound=_HasId)

QUESTION_TOOLS = frozenset({"quiz", "ask_user_question"})  # wait for the learner, no job
ID_LEDGERS = ("propositions", "edges", "events")


def verify_data_dir(root: Path, fs: FileOps | None = None) -> list[str]:
    """Every problem in `root` as one human-readable line, each once, its file named
    relative to `root` ("graph/edges.jsonl: …"); an empty list means sound.

    Strictly decodes every chat, job and ledger line; checks ledger ids are unique, every
    checkpoint's `folded_at` is within its chat, and no tool part is orphaned (pending with
    its job terminal or missing, or never started). Never writes.
    """
    fs = fs or OsFileOps()
    problems: list[str] = []
    chats = _records(fs, os.path.join(root, "chats"), ChatRecord, problems)
    jobs = _records(fs, os.path.join(root, "jobs"), Job, problems)
    ledgers = {
        name: _ledger(fs, os.path.join(root, "graph", f"{name}.jsonl"), t, problems)
        for name, t in LEDGER_TYPES.items()
    }
    for name in ID_LEDGERS:
        problems += _duplicates(name, ledgers[name])
    problems += _checkpoints(ledgers["sessions"], chats)
    for chat in chats.values():
        problems += _orphans(chat, jobs)
    problems += _traces(fs, os.path.join(root, "traces"))
    prefix = os.path.join(root, "")
    return list(dict.fromkeys(p.replace(prefix, "") for p in problems))


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


def _duplicates(name: str, lines: Sequence[_HasId]) -> list[str]:
    seen: set[str] = set()
    dupes: set[str] = set()
    for line in lines:
        (dupes if line.id in seen else seen).add(line.id)
    return [f"graph/{name}.jsonl: duplicate id {d!r}" for d in sorted(dupes)]


def _checkpoints(sessions: list[SessionCheckpoint], chats: dict[str, ChatRecord]) -> list[str]:
    out = []
    for cp in sessions:
        chat = chats.get(cp.chat_id)
        if chat is None:
            out.append(f"graph/sessions.jsonl: checkpoint for missing chat {cp.chat_id!r}")
        elif cp.folded_at > len(chat.messages):
            out.append(
                f"graph/sessions.jsonl: checkpoint of chat {cp.chat_id!r} is ahead of it "
                f"(folded_at {cp.folded_at} > {len(chat.messages)} messages)"
            )
    return out


def _orphans(chat: ChatRecord, jobs: dict[str, Job]) -> list[str]:
    out = []
    for message in chat.messages:
        for part in message.parts:
            if isinstance(part, ToolPart) and (why := _orphaned(part, jobs)):
                out.append(f"chat {chat.id!r} message {message.id!r}: {part.tool_call_id} {why}")
    return out


def _orphaned(part: ToolPart, jobs: dict[str, Job]) -> str:
    if part.state == "input-streaming":
        return "left streaming"
    if part.state != "input-available":
        return ""
    if part.job_id is not None:
        job = jobs.get(part.job_id)
        if job is None:
            return f"waits for missing job {part.job_id!r}"
        if job.status in TERMINAL_JOB_STATUSES:
            return f"waits for job {part.job_id!r} which is {job.status}"
        return ""
    if part.tool_name not in QUESTION_TOOLS:
        return f"({part.tool_name}) pending with no job"
    return ""


def _traces(fs: FileOps, directory: str) -> list[str]:
    decoder = msgspec.json.Decoder(AnyTraceEvent)
    out = []
    for name in _names(fs, directory, ".jsonl"):
        path = os.path.join(directory, name)
        try:
            data = fs.read(path)
            body = data[: complete_prefix(data)]
            # The trace store tolerates a bad last line, so only the lines before it count.
            decode_lines(decoder, body[: complete_prefix(body[:-1])], path, 1)
        except CorruptRecord as exc:
            out.append(f"{path}:{exc.line}: does not decode: {exc.detail}")
        except (HarnessError, OSError) as exc:
            out.append(f"{path}: {exc}")
    return out
