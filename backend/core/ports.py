"""The ports: every dependency the domain and the agents have on the outside world.

Adapters live in `backend.store` (files) and `backend.agent` (models); the composition
roots in `backend.server` wire them. Tests inject the same ports.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

import msgspec

from shared_contracts.accounts import Account, SignedIn
from shared_contracts.chat import ChatRecord, ChatSummary, NoticePart, ToolPart
from shared_contracts.graph import (
    AuditLine,
    EdgeLine,
    EventLine,
    MappingLine,
    PropositionLine,
    SessionCheckpoint,
)
from shared_contracts.jobs import Job
from shared_contracts.materials import Material, MaterialHit, MaterialText
from shared_contracts.model_io import ModelEvent, ModelRequest
from shared_contracts.plan import PlanTree
from shared_contracts.trace import AnyTraceEvent


class Clock(Protocol):
    """The only source of time: `now()` is timezone-aware UTC."""

    def now(self) -> datetime: ...


class IdGen(Protocol):
    """The only source of fresh ids: `new("chat")` → a valid, unique `Id`."""

    def new(self, prefix: str) -> str: ...


class ChatModel(Protocol):
    """One streaming model call with tools: yields chunks, then exactly one `ModelDone`.

    Raises `ModelError` on failure (after its own bounded retries).
    """

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...


class ChatStore(Protocol):
    """One record per chat; writes replace atomically; `update` is serialised per chat."""

    async def create(self, record: ChatRecord) -> None: ...

    async def get(self, chat_id: str) -> ChatRecord: ...

    async def list_summaries(self) -> list[ChatSummary]: ...

    async def update(
        self, chat_id: str, mutate: Callable[[ChatRecord], ChatRecord]
    ) -> ChatRecord: ...

    def pinned(self, chat_id: str) -> AbstractAsyncContextManager[None]:
        """For a running turn: while held, reads of the chat may be served from memory
        (a turn reads its chat many times) and writes may reuse what the turn's earlier
        writes encoded; no I/O of its own."""
        ...

    def held(self, chat_id: str) -> AbstractAsyncContextManager[None]:
        """For a learner's open session: while held, reads of the chat may be served from
        memory, so its turns do not decode it again; no I/O of its own."""
        ...

    def peek(self, chat_id: str) -> ChatRecord | None:
        """The chat's record as of its last completed write, if it is in memory (a held or
        pinned chat once read); None otherwise. No I/O, no await: a caller can pair it
        with other in-memory state in one step."""
        ...


LEDGER_TYPES: dict[str, type[msgspec.Struct]] = {
    "propositions": PropositionLine,
    "edges": EdgeLine,
    "events": EventLine,
    "mappings": MappingLine,
    "audit": AuditLine,
    "sessions": SessionCheckpoint,  # last: a checkpoint is never ahead of its lines
}
"""Each graph ledger's line type, in the order a batch is written (every adapter, the
archive and `harness verify` read the ledgers by it)."""
LEDGERS = tuple(LEDGER_TYPES)


@dataclass(slots=True)
class LedgerBatch:
    """Lines to append to the graph ledgers, or lines read back from them."""

    propositions: list[PropositionLine] = field(default_factory=list)
    edges: list[EdgeLine] = field(default_factory=list)
    events: list[EventLine] = field(default_factory=list)
    mappings: list[MappingLine] = field(default_factory=list)
    sessions: list[SessionCheckpoint] = field(default_factory=list)
    audit: list[AuditLine] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (
            self.propositions
            or self.edges
            or self.events
            or self.mappings
            or self.sessions
            or self.audit
        )


@dataclass(frozen=True, slots=True)
class LedgerCursor:
    """Where the next incremental read of each ledger starts, in the adapter's own unit
    (byte offsets into files, line positions in tables); opaque to everyone else."""

    offsets: tuple[tuple[str, int], ...] = ()

    def get(self, ledger: str) -> int:
        return dict(self.offsets).get(ledger, 0)


class GraphStore(Protocol):
    """Append-only ledgers with one writer; checkpoints are appended after their lines."""

    async def read_since(self, cursor: LedgerCursor) -> tuple[LedgerBatch, LedgerCursor]: ...

    async def append(self, batch: LedgerBatch) -> None: ...


class JobStore(Protocol):
    """One record per job; `save` replaces atomically."""

    async def save(self, job: Job) -> None: ...

    async def get(self, job_id: str) -> Job: ...

    async def list_all(self) -> list[Job]: ...

    async def unfinished(self) -> list[Job]:
        """The jobs not ended (pending or running), oldest first: what the orphan sweep
        reads every few seconds, so it reads no ended job."""
        ...


class TraceStore(Protocol):
    """An append-only event log per chat."""

    async def append(self, chat_id: str, events: list[AnyTraceEvent]) -> None: ...

    async def read(self, chat_id: str) -> list[AnyTraceEvent]: ...


class MaterialStore(Protocol):
    """A learner's documents: `add` keeps one whole (record, text, original, index) or nothing;
    `remove` drops all of it, its index entries included."""

    async def add(self, material: Material, text: MaterialText, original: bytes) -> None: ...

    async def get(self, material_id: str) -> Material: ...

    async def list_all(self) -> list[Material]: ...

    async def text(self, material_id: str) -> MaterialText: ...

    async def original(self, material_id: str) -> bytes:
        """The bytes that were uploaded (an export carries them)."""
        ...

    async def remove(self, material_id: str) -> None: ...


class SearchPort(Protocol):
    """Full-text search over a learner's materials: the best chunks for `query` (BM25), of
    one material or all, maybe none; the stored page text a quote is checked against; and
    whether there is anything to search at all."""

    async def has_material(self) -> bool: ...

    async def search(
        self, query: str, *, limit: int = 8, material_id: str | None = None
    ) -> list[MaterialHit]: ...

    async def page_text(self, material_id: str, page: int) -> str: ...


class TurnClaims(Protocol):
    """A chat's turn slot across every process serving its learner: `claim` is True when
    this process now holds it (False: a turn runs in another process); a crashed holder's
    claims end with it. Within one process the caller keeps its own slot (one claim per
    chat at a time)."""

    async def claim(self, chat_id: str) -> bool: ...

    async def release(self, chat_id: str) -> None: ...

    async def elsewhere(self, chat_id: str) -> bool:
        """Whether another process holds the chat's claim now (a turn runs there)."""
        ...


class ProcessLocks(Protocol):
    """Mutual exclusion per key across the processes sharing a learner's store: `hold(key)`
    waits until no other process holds `key`; a crashed holder's locks end with it. Within
    one process the callers serialise themselves (it excludes other processes only)."""

    def hold(self, key: str) -> AbstractAsyncContextManager[None]: ...

    async def join(self) -> bool:
        """Count this process among those serving the learner, for as long as it runs;
        True when no other one is (then every unfinished job is a crash's; beside others,
        only those whose `JobLocks` lock no process holds)."""
        ...


class JobLocks(Protocol):
    """Which process runs a job, across every process serving its learner: the runner
    `hold`s a job's lock from before the job is saved pending until its end is saved, then
    `release`s it; a crashed holder's locks end with it. So a job that has not ended and
    whose lock no process holds is an orphan: its runner died (or, for a moment after a
    database restart, has not taken its locks again: an orphan is seen twice, a sweep
    apart, before it is ended)."""

    async def hold(self, job_id: str) -> None: ...

    async def release(self, job_id: str) -> None: ...

    async def adopt(self, job_id: str) -> bool:
        """True when no process held the job's lock: this one holds it now (to end the job
        as interrupted, then `release`). False while its runner lives, this process's own
        jobs included."""
        ...

    async def renew(self) -> None:
        """Take again the locks this process holds if it lost them with its connection (a
        database restart): before each sweep, so a live runner's jobs are held again
        before another process looks at them a second time."""
        ...


RemoteDelivery = Callable[[str, str | None], Awaitable[None]]
"""`deliver(chat_id, frame)`: a frame another process published for `chat_id` (encoded as
sent), or None: the chat changed there in a way its frame could not carry (re-read it)."""


class ChatFanOut(Protocol):
    """A chat's frames to the sockets other processes serve: `publish` queues one (never
    blocks, keeps this process's order); `serve` runs until cancelled, sending what was
    published and handing what other processes published to `deliver`. At most once: a
    frame in flight when a process or the connection dies is lost (sockets re-read the
    chat on reconnect)."""

    @property
    def remote(self) -> bool:
        """Whether other processes may serve the learner (False: publishing is a no-op)."""
        ...

    def publish(self, chat_id: str, frame: str | None) -> None: ...

    async def serve(self, deliver: RemoteDelivery) -> None: ...


OwnedKind = Literal["chat", "job", "material"]


class OwnedIds(Protocol):
    """Whether one learner has a chat, job or material of this id: answered from where the
    learner's ids live (a directory listing entry, a key), never by reading a record, so a
    request naming another learner's id is refused before any store is called."""

    async def owns(self, kind: OwnedKind, item_id: str) -> bool: ...


class AccountStore(Protocol):
    """Accounts by username (`create` refuses a taken one with `AlreadyExists`) and
    signed-in sessions by their token's digest."""

    async def create(self, account: Account) -> None: ...

    async def find(self, username: str) -> Account | None: ...

    async def open_session(self, digest: str, session: SignedIn) -> None: ...

    async def session(self, digest: str) -> SignedIn | None: ...

    async def close_session(self, digest: str) -> None: ...

    async def close_expired(self, now: datetime) -> int:
        """Remove every session expired by `now` (one never presented again would stay
        forever); returns how many went."""
        ...


class RateLimits(Protocol):
    """A token bucket per key (`name:<username>`, `address:<client>`): `burst` attempts at
    once, one more every `every_s` seconds, timed by the caller's clock; one state for
    every process serving the same data (a missing key is a full bucket)."""

    async def take(self, key: str, burst: int, every_s: float, now: datetime) -> float:
        """Spend one attempt of `key`: 0.0 if allowed, else the seconds until the next."""
        ...


class SystemPrompt(Protocol):
    """A rendered system prompt as a turn used it (the teacher's `RenderedPrompt`)."""

    @property
    def template_id(self) -> str: ...

    @property
    def template_hash(self) -> str: ...

    @property
    def graph_context(self) -> str: ...

    @property
    def text(self) -> str: ...


class TurnObserver(Protocol):
    """What a chat's turns and jobs tell an observer (the recorder) at their boundaries.

    Called in the order things happen, from the task doing them; an observer's failure is
    its own (logged), never the lesson's. `turn` is the turn's number in its chat.
    """

    async def chat_created(self, record: ChatRecord) -> None:
        """A chat was created (its trace, if any, starts with its first turn)."""
        ...

    async def turn_opening(self, chat_id: str) -> None:
        """A turn is about to open: before it draws any time or id, or writes."""
        ...

    async def jobs_delivered(self, chat_id: str, turn: int, notices: Sequence[NoticePart]) -> None:
        """The opening write handed these finished job results to the teacher."""
        ...

    async def answer_recorded(self, chat_id: str, turn: int, part: ToolPart) -> None:
        """The learner's answer (graded, or a reply) was written into its question's part."""
        ...

    async def prompt_rendered(self, chat_id: str, turn: int, prompt: SystemPrompt) -> None:
        """The system prompt the turn's teacher runs with."""
        ...

    async def step_starting(self, chat_id: str, turn: int) -> None:
        """A teacher step is about to read the chat and call the model."""
        ...

    async def tool_ran(
        self,
        chat_id: str,
        turn: int,
        arguments: str,
        part: ToolPart,
        before: PlanTree | None = None,
        after: PlanTree | None = None,
    ) -> None:
        """A tool call was executed or refused: its raw arguments and resulting part (and
        the plan before and after, for a plan tool)."""
        ...

    async def turn_closed(self, chat_id: str, turn: int) -> None:
        """The turn's last write is done (aborted and failed turns included)."""
        ...

    async def job_submitted(self, chat_id: str, job_id: str, tool_call_id: str) -> None:
        """A job tool part got its background job."""
        ...

    async def job_finished(self, job: Job) -> None:
        """A job ended (done, failed or cancelled) and its tool part was settled."""
        ...

    async def flush(self, chat_id: str) -> None:
        """A unit of the chat ended: write what was observed of it so far."""
        ...
