"""One learner's decoded data, whatever stored it, and the invariants `harness verify`
checks over it: unique ledger ids, checkpoints within their chats, no orphaned tool parts.
Each problem is one line; `where(ledger)` names a ledger as its store does (a file, a
table)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from shared_contracts.chat import ChatRecord, ToolPart
from shared_contracts.graph import SessionCheckpoint
from shared_contracts.jobs import TERMINAL_JOB_STATUSES, Job
from shared_contracts.materials import Material, MaterialText
from shared_contracts.trace import AnyTraceEvent

QUESTION_TOOLS = frozenset({"quiz", "ask_user_question"})  # wait for the learner, no job
ID_LEDGERS = ("propositions", "edges", "events")


@dataclass
class LearnerData:
    """Everything one learner has stored, decoded: chats and jobs by id, each ledger's
    lines by ledger name, each chat's trace events by chat id."""

    chats: dict[str, ChatRecord] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    ledgers: dict[str, list[Any]] = field(default_factory=dict)
    traces: dict[str, list[AnyTraceEvent]] = field(default_factory=dict)
    materials: dict[str, StoredMaterial] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StoredMaterial:
    """One material as stored: its record, its text and the uploaded bytes."""

    material: Material
    text: MaterialText
    original: bytes


class HasId(Protocol):
    @property
    def id(self) -> str: ...


def duplicates(where: str, lines: Sequence[HasId]) -> list[str]:
    seen: set[str] = set()
    dupes: set[str] = set()
    for line in lines:
        (dupes if line.id in seen else seen).add(line.id)
    return [f"{where}: duplicate id {d!r}" for d in sorted(dupes)]


def checkpoints(
    where: str, sessions: list[SessionCheckpoint], chats: Mapping[str, ChatRecord]
) -> list[str]:
    out = []
    for cp in sessions:
        chat = chats.get(cp.chat_id)
        if chat is None:
            out.append(f"{where}: checkpoint for missing chat {cp.chat_id!r}")
        elif cp.folded_at > len(chat.messages):
            out.append(
                f"{where}: checkpoint of chat {cp.chat_id!r} is ahead of it "
                f"(folded_at {cp.folded_at} > {len(chat.messages)} messages)"
            )
    return out


def orphans(chat: ChatRecord, jobs: Mapping[str, Job]) -> list[str]:
    out = []
    for message in chat.messages:
        for part in message.parts:
            if isinstance(part, ToolPart) and (why := _orphaned(part, jobs)):
                out.append(f"chat {chat.id!r} message {message.id!r}: {part.tool_call_id} {why}")
    return out


def _orphaned(part: ToolPart, jobs: Mapping[str, Job]) -> str:
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


def check_all(
    where: Callable[[str], str],
    chats: Mapping[str, ChatRecord],
    jobs: Mapping[str, Job],
    ledgers: Mapping[str, Sequence[Any]],
) -> list[str]:
    """Every invariant over one learner's decoded data (`ledgers` by name, as decoded)."""
    problems: list[str] = []
    for name in ID_LEDGERS:
        problems += duplicates(where(name), ledgers[name])
    problems += checkpoints(where("sessions"), list(ledgers["sessions"]), chats)
    for chat in chats.values():
        problems += orphans(chat, jobs)
    return problems


def material_problems(where: str, material: Material, text: MaterialText) -> list[str]:
    """A material's record and text agree on the counts, and every chunk is exactly its
    span of its page."""
    out = []
    if (material.pages, material.chunks) != (len(text.pages), len(text.chunks)):
        out.append(
            f"{where}: counts {material.pages} pages and {material.chunks} chunks, "
            f"its text has {len(text.pages)} and {len(text.chunks)}"
        )
    pages = text.pages
    bad = [
        i
        for i, c in enumerate(text.chunks)
        if not 1 <= c.page <= len(pages) or pages[c.page - 1][c.start : c.end] != c.text
    ]
    if bad:
        out.append(f"{where}: {len(bad)} chunk(s) differ from their page text (first: {bad[0]})")
    return out
