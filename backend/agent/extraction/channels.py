"""The graph's two channels as the server and the CLI use them (no transport here).

`GraphReader` is the read channel: it follows the ledgers incrementally and reuses the
derived snapshot until they grow or the moment moves; it never writes. Every read is as
of a moment (`as_of`): by default the clock's now, never earlier than the newest folded
line (a skewed clock hides nothing); a moment a client names is taken as it is, so an
earlier one is time travel. `ExtractionService` is the write
channel's trigger seam: it counts answered quizzes not yet folded and runs the pipeline in
the background, single-flight per chat.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Protocol

from anyio.abc import TaskGroup

from backend.agent.extraction.ledger_view import LedgerView
from backend.agent.extraction.pipeline import ExtractionReport
from backend.agent.extraction.single_flight import SingleFlight
from backend.core.calibration import calibration, graded_answers
from backend.core.graph import GraphState, SnapshotDeriver
from backend.core.graph_context import render_graph_context
from backend.core.memory import MemoryPolicy
from backend.core.pending import pending_answers
from backend.core.ports import ChatStore, Clock, GraphStore, ProcessLocks
from backend.core.review import QUEUE_LIMIT, review_queue
from backend.core.review_session import BRIEF_ITEMS, session_brief, to_revisit
from shared_contracts.graph import GraphSnapshot
from shared_contracts.http import ExtractAccepted, GraphContext
from shared_contracts.learner import Calibration, ReviewBriefItem, ReviewQueue

log = logging.getLogger(__name__)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a synchronous bulk build (restored after,
    exceptions included). A cold derive allocates ~100k long-lived, acyclic objects; the
    full collections they trigger traverse the whole heap, find nothing, and cost about
    a third of the derive. Refcounting still frees everything as usual."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class GraphReader:
    """Derived graph reads; decodes and folds only lines appended since the last read, and
    re-derives only the nodes, edges and sessions those lines touched (and, as the moment
    moves on, the nodes whose recall changed). Its own view and deriver by default;
    `following` shares another's (the pipeline's) so the process folds the graph once.
    With no clock, a read that names no moment is the view of no moment (no recall, no
    `fading` or `resolved`), for readers that predate the learner model."""

    def __init__(
        self, graph: GraphStore, *, clock: Clock | None = None, policy: MemoryPolicy | None = None
    ) -> None:
        self._deriver = SnapshotDeriver(policy)
        self._view = LedgerView(graph, on_fold=self._deriver.apply)
        self._clock = clock

    @classmethod
    def following(
        cls, view: LedgerView, deriver: SnapshotDeriver, *, clock: Clock | None = None
    ) -> GraphReader:
        """A reader over an existing `view` and the `deriver` its `on_fold` feeds (both
        stay their owner's; reading only refreshes the view, it never writes)."""
        reader = cls.__new__(cls)
        reader._view = view
        reader._deriver = deriver
        reader._clock = clock
        return reader

    @property
    def policy(self) -> MemoryPolicy:
        return self._deriver.policy

    async def snapshot(self, as_of: datetime | None = None) -> GraphSnapshot:
        """The graph as of `as_of` (default: now): every line up to that moment, each
        node's memory and state then (the same object until the ledgers grow or the moment
        moves)."""
        state = await self._view.refresh()
        return self._derive(state, as_of if as_of is not None else self._now(state))

    async def latest(self) -> GraphSnapshot:
        """The graph as of its newest folded line: what an extraction run reports (no clock
        read, so a replay derives the same)."""
        state = await self._view.refresh()
        return self._derive(state, state.latest)

    async def snapshot_for(self, as_of: datetime) -> GraphSnapshot:
        """The graph as a session starting at `as_of` sees it: as of then, never earlier
        than the newest folded line (the teacher sees every line the graph holds)."""
        state = await self._view.refresh()
        return self._derive(state, _at_least_latest(state, as_of))

    async def context(self, as_of: datetime | None = None) -> GraphContext:
        """The teacher's markdown block (≤ 2,000 tokens; empty for an empty graph) as of
        `as_of` (a turn passes its own moment; default now), never earlier than the newest
        folded line: the teacher sees every line the graph holds."""
        state = await self._view.refresh()
        moment = _at_least_latest(state, as_of) if as_of is not None else self._now(state)
        return render_graph_context(self._derive(state, moment))

    async def review(self, as_of: datetime | None = None, limit: int = QUEUE_LIMIT) -> ReviewQueue:
        """The review queue as of `as_of` (default now; with no clock, the newest folded
        line's moment; see `backend.core.review`): its first `limit` items."""
        state = await self._view.refresh()
        moment = as_of or self._now(state) or state.latest or _EPOCH
        return review_queue(self._derive(state, moment), self.policy, limit=limit)

    async def review_brief(self, as_of: datetime) -> list[ReviewBriefItem]:
        """What a review session starting at `as_of` probes (`core.review_session`), as of
        then but never earlier than the newest folded line."""
        state = await self._view.refresh()
        snapshot = self._derive(state, _at_least_latest(state, as_of))
        queue = review_queue(snapshot, self.policy, limit=BRIEF_ITEMS)
        return session_brief(snapshot, queue, to_revisit(state.events.values()))

    async def calibration(self, as_of: datetime | None = None) -> Calibration:
        """Stated confidence against correctness over the graded answers given up to
        `as_of` (default now), each answer once."""
        state = await self._view.refresh()
        moment = as_of if as_of is not None else self._now(state)
        return calibration(graded_answers(state.events.values()), as_of=moment)

    async def folded_at(self, chat_id: str) -> int:
        """Messages of `chat_id` already folded into the graph."""
        return (await self._view.refresh()).folded_at(chat_id)

    def _now(self, state: GraphState) -> datetime | None:
        return None if self._clock is None else _at_least_latest(state, self._clock.now())

    def _derive(self, state: GraphState, as_of: datetime | None) -> GraphSnapshot:
        with collector_paused():
            return self._deriver.snapshot(state, as_of)


_EPOCH = datetime.min.replace(tzinfo=UTC)


def _at_least_latest(state: GraphState, moment: datetime) -> datetime:
    """`moment`, or the newest folded line's if that is later."""
    latest = state.latest
    return latest if latest is not None and latest > moment else moment


class ExtractionRunner(Protocol):
    """The extraction pipeline as the trigger runs it (one run per call)."""

    async def run(self, chat_id: str) -> ExtractionReport: ...


class ExtractionService:
    """Rules: a run starts only through `SingleFlight` (one in flight per chat, at most one
    coalesced follow-up) and runs holding the chat's process lock (so across processes
    too: a run waiting there finds the window folded and does nothing); a failed run is
    logged and retried by the next trigger."""

    def __init__(
        self,
        chats: ChatStore,
        graph_reader: GraphReader,
        pipeline: ExtractionRunner,
        task_group: TaskGroup,
        *,
        every_n: int,
        on_merged: Callable[[str, ExtractionReport], Awaitable[None]],
        locks: ProcessLocks | None = None,
    ) -> None:
        self._locks = locks
        self._chats = chats
        self._reader = graph_reader
        self._pipeline = pipeline
        self._flight = SingleFlight(task_group)
        self._every_n = max(every_n, 1)
        self._on_merged = on_merged

    async def pending(self, chat_id: str) -> int:
        """Graded quizzes of the chat not yet folded into the graph."""
        record = await self._chats.get(chat_id)
        return pending_answers(record, await self._reader.folded_at(chat_id))

    async def maybe_trigger(self, chat_id: str) -> bool:
        """Start a background run once `every_n` answers wait; True if one started now."""
        waiting = await self.pending(chat_id)
        if waiting < self._every_n:
            return False
        return self._flight.trigger(chat_id, lambda: self._run(chat_id))

    async def flush(self, chat_id: str) -> ExtractAccepted:
        """Run extraction now (session end), through the same single-flight."""
        waiting = await self.pending(chat_id)
        started = self._flight.trigger(chat_id, lambda: self._run(chat_id))
        return ExtractAccepted(chat_id=chat_id, started=started, pending_answers=waiting)

    async def wait_idle(self, chat_id: str) -> None:
        """Return once no run for the chat is in flight (tests, shutdown)."""
        await self._flight.wait_idle(chat_id)

    def in_flight(self, chat_id: str) -> bool:
        """Whether a run for the chat is running now."""
        return self._flight.in_flight(chat_id)

    def runs(self, chat_id: str) -> int:
        """How many runs were started for the chat (coalesced triggers not counted)."""
        return self._flight.runs.get(chat_id, 0)

    async def _run(self, chat_id: str) -> None:
        if self._locks is None:
            report = await self._pipeline.run(chat_id)
        else:
            async with self._locks.hold(f"extract:{chat_id}"):
                report = await self._pipeline.run(chat_id)
        if report.nothing_to_do:
            return
        try:
            await self._on_merged(chat_id, report)
        except Exception as exc:  # a client push failing never fails the merge
            log.warning("[extraction %s] on_merged failed: %s", report.run_id, exc)
