"""One strict replay (or the replayed part of a fork): the real server, on a temp data
dir, fed the recorded learner frames and answered from the recording; then compared."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import anyio
import msgspec

from backend.agent.roles import OFFLINE, teacher_model
from backend.core.errors import ModelError, NotFound
from backend.core.ports import ChatModel, LedgerBatch, LedgerCursor
from backend.replay.cassette import Cassette
from backend.replay.diff import ReplayResult, compare
from backend.replay.divergence import Divergence
from backend.replay.feed import feed, release_when_stalled, settle
from backend.replay.settings import replay_settings
from backend.server.runtime import RandomIds, SystemClock
from backend.server.services import open_services
from backend.server.stores import Stores, build_stores
from backend.tracing.hashing import LEDGERS
from backend.tracing.ports import read_expanded
from backend.tracing.tracer import Tracer
from shared_contracts.chat import UNTITLED, ChatRecord, ForkOrigin
from shared_contracts.model_io import ModelEvent, ModelRequest
from shared_contracts.trace import AnyTraceEvent, ClockEvent, InboundFrameEvent, MarkEvent

STALL_S = 5.0


class NoLiveModel:
    """The teacher of a strict replay: every call must come from the cassette."""

    name = "replay"

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        raise ModelError("a strict replay makes no live model calls")


@dataclass
class Session:
    """What a replay runs: the recording, its cassette, and the chat it replays into."""

    recorded: list[AnyTraceEvent]
    config: dict[str, str]
    cassette: Cassette
    stores: Stores
    tracer: Tracer
    record: ChatRecord
    live: bool

    @property
    def chat_id(self) -> str:
        return self.record.id

    def inbound(self) -> list[InboundFrameEvent]:
        """The learner frames to feed (a fork: those before its turn)."""
        fork_seq = self.cassette.fork_seq
        recorded = self.recorded
        return [e for e in recorded if isinstance(e, InboundFrameEvent) and e.seq < fork_seq]


async def run_replay(
    source: Stores,
    chat_id: str,
    work_dir: Path,
    *,
    template: str | None = None,
    fork_turn: int | None = None,
    fork_model: str = OFFLINE,
    teacher: ChatModel | None = None,
    stall_s: float = STALL_S,
) -> ReplayResult:
    """Replay `chat_id` from `source` on `work_dir`; see `backend.replay`."""
    session = await _session(source, chat_id, work_dir, fork_turn, fork_model)
    if teacher is None:
        teacher = teacher_model(fork_model) if session.live else NoLiveModel()
    replayed, runtime = await _run(session, work_dir, teacher, template, stall_s)
    result = ReplayResult(chat_id=chat_id, events=replayed)
    cassette = session.cassette
    if session.live:
        await session.tracer.flush(session.chat_id)  # a fork keeps all its live part did
        result.events = await _read(session.stores, session.chat_id)
        result.fork_id = session.chat_id
        return result
    result.ends_inside_turn = cassette.ends_inside_turn
    if cassette.shutdown is not None:
        result.shutdown_cut = sorted(cassette.shutdown.units)
    compare(session.recorded, replayed, runtime, result, unrecorded=cassette.unrecorded)
    return result


async def _session(
    source: Stores, chat_id: str, work_dir: Path, fork_turn: int | None, fork_model: str
) -> Session:
    recorded = read_expanded(await source.traces.read(chat_id), chat_id)
    started = _first_mark(recorded, "turn_started")
    created = _first_mark(recorded, "chat_created")
    if started is None:
        raise NotFound(f"chat {chat_id!r} has no recorded turn to replay")
    cassette = Cassette(recorded, fork_turn)
    stores = build_stores(work_dir)
    await _seed_graph(source, stores, (created or started).graph_counts)
    at = created.at if created and created.at else _first_clock(recorded)
    await _seed_materials(source, stores, at)
    tracer = Tracer(
        stores.traces, stores.chats, stores.graph, player=cassette, config=started.config
    )
    live = fork_turn is not None
    record = ChatRecord(
        id=RandomIds().new("chat") if live else chat_id,
        title=created.title if created else UNTITLED,
        created_at=at,
        updated_at=at,
        model=fork_model if live else started.config.get("teacher", OFFLINE),
        forked_from=None if fork_turn is None else ForkOrigin(chat_id=chat_id, from_turn=fork_turn),
        material_id=created.material_id if created else msgspec.UNSET,
    )
    return Session(recorded, started.config, cassette, stores, tracer, record, live)


async def _run(
    session: Session, work_dir: Path, teacher: ChatModel, template: str | None, stall_s: float
) -> tuple[list[AnyTraceEvent], list[Divergence]]:
    """Run the replay to its end: the events it recorded, and the divergences met on the
    way (before its held units are released: what they do then is not compared)."""
    cassette, stores, tracer = session.cassette, session.stores, session.tracer
    chat_id = session.chat_id
    replayed: list[AnyTraceEvent] = []
    runtime: list[Divergence] = []
    async with anyio.create_task_group() as watchdog:
        with anyio.CancelScope() as server:
            async with open_services(
                replay_settings(work_dir, session.config),
                model=teacher,
                clock=SystemClock(),
                ids=RandomIds(),
                stores=stores,
                tracer=tracer,
                template=template,
            ) as services:
                await stores.chats.create(session.record)
                await tracer.chat_created(session.record)
                expected = 0 if session.live else len(session.recorded)
                with anyio.move_on_after(_budget(session.recorded, stall_s)):
                    await feed(services, cassette, chat_id, session.inbound(), stall_s)
                    await settle(services, cassette, chat_id, expected, stall_s)
                if cassette.shutdown is None:
                    # What the replay did up to here is compared; held units are released.
                    await tracer.flush(chat_id)
                    replayed = await _read(stores, chat_id)
                    runtime = list(cassette.divergences)
                    cassette.close()
                else:
                    # The recording ends with a shutdown: so does the replay, here. Each held
                    # unit takes its recorded cancellation path (its sync points gated as
                    # recorded); all of it is compared. A path that stalls is released.
                    watchdog.start_soon(release_when_stalled, cassette, stall_s)
                    server.cancel()
        if cassette.shutdown is not None:
            replayed = await _read(stores, chat_id)
            runtime = list(cassette.divergences)
            cassette.close()
        watchdog.cancel_scope.cancel()
    return replayed, runtime


async def _read(stores: Stores, chat_id: str) -> list[AnyTraceEvent]:
    return read_expanded(await stores.traces.read(chat_id), chat_id)


def _first_mark(events: Sequence[AnyTraceEvent], mark: str) -> MarkEvent | None:
    return next((e for e in events if isinstance(e, MarkEvent) and e.mark == mark), None)


def _first_clock(events: Sequence[AnyTraceEvent]) -> datetime:
    return next(e.value for e in events if isinstance(e, ClockEvent))


def _budget(events: Sequence[AnyTraceEvent], stall_s: float) -> float:
    return stall_s * 4 + 0.05 * len(events)


async def _seed_materials(source: Stores, target: Stores, began: datetime) -> None:
    """The learner's documents when the session began, as the teacher's material block and
    its searches read them (their text and index; the original files stay where they are).
    One uploaded later would change the replayed prompt: it is left out."""
    for material in await source.materials.list_all():
        if material.created_at is not None and material.created_at > began:
            continue
        await target.materials.add(material, await source.materials.text(material.id), b"")


async def _seed_graph(source: Stores, target: Stores, counts: dict[str, int]) -> None:
    """The graph as it was when the session began: a prefix of each source ledger."""
    if not any(counts.values()):
        return
    batch, _ = await source.graph.read_since(LedgerCursor())
    base = LedgerBatch(**{name: getattr(batch, name)[: counts.get(name, 0)] for name in LEDGERS})
    await target.graph.append(base)
