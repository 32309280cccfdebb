"""Hand-written fakes of the ports that record what happened (no monkeypatching)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import msgspec

from backend.core.errors import ModelError, NotFound
from backend.core.ports import LedgerBatch, LedgerCursor
from backend.core.summaries import chat_summary
from shared_contracts.chat import ChatRecord, ChatSummary
from shared_contracts.jobs import TERMINAL_JOB_STATUSES, Job
from shared_contracts.model_io import (
    ModelDone,
    ModelEvent,
    ModelMessage,
    ModelRequest,
    ModelToolCall,
    TextChunk,
    ToolCallChunk,
)
from shared_contracts.trace import AnyTraceEvent


class FixedClock:
    """Starts at a fixed instant and advances by `step` on every call."""

    def __init__(self, start: datetime | None = None, step: timedelta = timedelta(seconds=1)):
        self.current = start or datetime(2026, 1, 1, tzinfo=UTC)
        self.step = step

    def now(self) -> datetime:
        value = self.current
        self.current += self.step
        return value


class SequentialIds:
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def new(self, prefix: str) -> str:
        self.counts[prefix] = self.counts.get(prefix, 0) + 1
        return f"{prefix}-{self.counts[prefix]:04d}"


class MemoryChatStore:
    def __init__(self) -> None:
        self.records: dict[str, ChatRecord] = {}
        self.writes = 0

    async def create(self, record: ChatRecord) -> None:
        self.records[record.id] = record
        self.writes += 1

    @asynccontextmanager
    async def pinned(self, chat_id: str):
        yield  # every record is in memory already

    @asynccontextmanager
    async def held(self, chat_id: str):
        yield

    def peek(self, chat_id: str) -> ChatRecord | None:
        return self.records.get(chat_id)

    async def get(self, chat_id: str) -> ChatRecord:
        try:
            return self.records[chat_id]
        except KeyError:
            raise NotFound(f"chat {chat_id!r} not found") from None

    async def list_summaries(self) -> list[ChatSummary]:
        out = [chat_summary(r) for r in self.records.values()]
        return sorted(out, key=lambda s: s.created_at, reverse=True)

    async def update(self, chat_id: str, mutate: Callable[[ChatRecord], ChatRecord]) -> ChatRecord:
        record = mutate(await self.get(chat_id))
        self.records[chat_id] = record
        self.writes += 1
        return record


class MemoryGraphStore:
    """Keeps ledger lines in lists; the cursor is a line count per ledger."""

    LEDGERS = ("propositions", "edges", "events", "mappings", "sessions", "audit")

    def __init__(self) -> None:
        self.batch = LedgerBatch()
        self.appends: list[LedgerBatch] = []

    async def read_since(self, cursor: LedgerCursor) -> tuple[LedgerBatch, LedgerCursor]:
        out = LedgerBatch()
        offsets = []
        for name in self.LEDGERS:
            lines = getattr(self.batch, name)
            getattr(out, name).extend(lines[cursor.get(name) :])
            offsets.append((name, len(lines)))
        return out, LedgerCursor(tuple(offsets))

    async def append(self, batch: LedgerBatch) -> None:
        self.appends.append(batch)
        for name in self.LEDGERS:
            getattr(self.batch, name).extend(getattr(batch, name))


class MemoryJobStore:
    def __init__(self) -> None:
        self.jobs: dict[str, Job] = {}
        self.history: list[Job] = []

    async def save(self, job: Job) -> None:
        self.jobs[job.id] = job
        self.history.append(job)

    async def get(self, job_id: str) -> Job:
        try:
            return self.jobs[job_id]
        except KeyError:
            raise NotFound(f"job {job_id!r} not found") from None

    async def list_all(self) -> list[Job]:
        return list(self.jobs.values())

    async def unfinished(self) -> list[Job]:
        return [j for j in self.jobs.values() if j.status not in TERMINAL_JOB_STATUSES]


class MemoryTraceStore:
    def __init__(self) -> None:
        self.events: dict[str, list[AnyTraceEvent]] = {}

    async def append(self, chat_id: str, events: list[AnyTraceEvent]) -> None:
        self.events.setdefault(chat_id, []).extend(events)

    async def read(self, chat_id: str) -> list[AnyTraceEvent]:
        return list(self.events.get(chat_id, []))


def text_reply(text: str, chunk: int = 8) -> list[ModelEvent]:
    """A streamed text answer: chunks of `chunk` characters, then ModelDone."""
    events: list[ModelEvent] = [
        TextChunk(text=text[i : i + chunk]) for i in range(0, len(text), chunk)
    ]
    events.append(ModelDone(message=ModelMessage(role="assistant", content=text)))
    return events


def tool_reply(calls: Sequence[tuple[str, str, object]], text: str = "") -> list[ModelEvent]:
    """Text (optional) then tool calls given as (id, name, args); args that are a str are
    sent verbatim (to test malformed JSON), anything else is JSON-encoded."""
    events: list[ModelEvent] = text_reply(text)[:-1] if text else []
    tool_calls = []
    for index, (call_id, name, args) in enumerate(calls):
        raw = args if isinstance(args, str) else msgspec.json.encode(args).decode()
        events.append(ToolCallChunk(index=index, id=call_id, name=name))
        events.append(ToolCallChunk(index=index, arguments=raw))
        tool_calls.append(ModelToolCall(id=call_id, name=name, arguments=raw))
    events.append(
        ModelDone(
            message=ModelMessage(role="assistant", content=text, tool_calls=tool_calls),
            finish_reason="tool_calls",
        )
    )
    return events


Step = Iterable[ModelEvent] | Exception | Callable[[ModelRequest], Iterable[ModelEvent]]


class ScriptedModel:
    """Plays one scripted step per call and records every request it was given.

    A step is a list of events, an exception to raise, or a function of the request.
    An exception placed *inside* an event list is raised after the events before it.
    """

    name = "scripted"

    def __init__(self, steps: Iterable[Step]) -> None:
        self.steps = list(steps)
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        if not self.steps:
            raise ModelError("scripted model has no more steps")
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        events = step(request) if callable(step) else step
        for event in events:
            if isinstance(event, Exception):
                raise event
            yield event
