"""Sync points order units identically in a recording and its replay (issue 7's race).

The ordering rule: no await between a sync point and the decision that follows it (claim
or release the chat's turn slot, which the trace does not see). A sync point returns to
its unit without a scheduling point, in a recording and in a replay, for a turn (whose
sync points are shielded and followed by an abort landing check) and for other units."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from backend.replay.cassette import Cassette
from backend.server.dispatch import receive
from backend.server.hub import Connection
from backend.server.models import role_config
from backend.server.settings import Settings
from backend.server.stores import build_stores
from backend.tracing.tracer import Tracer
from backend.tracing.units import entered
from shared_contracts.jobs import Job
from shared_contracts.trace import (
    AnyTraceEvent,
    CheckpointEvent,
    InboundFrameEvent,
    JobTraceEvent,
    MarkEvent,
)
from tests.fakes import (
    FixedClock,
    MemoryChatStore,
    MemoryGraphStore,
    MemoryTraceStore,
    ScriptedModel,
    text_reply,
)
from tests.golden.record import recorded_services, settle
from tests.replay.abort_session import frame


class Ticker:
    """Counts event-loop passes: a task that yields and counts, forever (calling `look`
    first each time). A unit that reads `ticks` twice with no scheduling point in between
    reads the same value."""

    def __init__(self, look=None) -> None:
        self.ticks = 0
        self.look = look

    async def run(self) -> None:
        while True:
            await anyio.lowlevel.checkpoint()
            if self.look is not None:
                self.look(self.ticks)
            self.ticks += 1


class WatchedTracer(Tracer):
    """A recorder that notes the loop pass at which each event was emitted."""

    ticker: Ticker

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.emitted_at: list[tuple[AnyTraceEvent, int]] = []
        emit = self.recorder.emit

        def watched(chat_id: str, event: AnyTraceEvent) -> None:
            self.emitted_at.append((event, self.ticker.ticks))
            emit(chat_id, event)

        self.recorder.emit = watched  # type: ignore[method-assign]  # every emit passes here


class SlowTraces(MemoryTraceStore):
    """A trace store whose appends take a while (and so can be interrupted)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = anyio.Event()

    async def append(self, chat_id, events) -> None:
        self.started.set()
        await anyio.sleep(0.05)
        await super().append(chat_id, events)


def finished_job(job: str) -> Job:
    return Job(
        id=job,
        chat_id="chat-1",
        tool_call_id="call-1",
        kind="research",
        brief="why",
        status="done",
        created_at=FixedClock().now(),
    )


def job_event(job: str, seq: int = 0) -> JobTraceEvent:
    return JobTraceEvent(seq=seq, scope=f"job:{job}", job_id=job, phase="finished")


async def test_a_flush_cancelled_at_shutdown_still_writes_its_events():
    traces = SlowTraces()
    tracer = Tracer(traces, MemoryChatStore(), MemoryGraphStore())
    tracer.recorder.emit("chat-1", job_event("job-1"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(tracer.flush, "chat-1")
        await traces.started.wait()
        tg.cancel_scope.cancel()  # as the app's task group is at shutdown
    assert [e.job_id for e in traces.events["chat-1"]] == ["job-1"]  # type: ignore[union-attr]


async def test_sync_points_are_queued_in_passing_order_and_written_by_one_flush():
    """Passing a sync point writes nothing (so its unit runs on to its next await without
    yielding); the unit's flush writes every queued point, in the order units passed them."""
    traces = SlowTraces()
    tracer = Tracer(traces, MemoryChatStore(), MemoryGraphStore())
    passed: list[str] = []

    async def job() -> None:
        with entered("chat-1", "job:job-1"):
            await tracer.job_finished(finished_job("job-1"))
            passed.append("job:job-1")

    async def turn() -> None:
        with entered("chat-1", "turn:1"):
            async with tracer.order.access("chat-1", "read"):
                pass
            passed.append("turn:1")

    async with anyio.create_task_group() as tg:
        tg.start_soon(job)
        tg.start_soon(turn)
    assert not traces.started.is_set()  # no write while passing sync points
    await tracer.flush("chat-1")
    written = traces.events["chat-1"]
    assert [e.scope for e in written] == passed
    assert [e.seq for e in written] == [0, 1]


async def test_a_sync_point_waits_while_another_unit_holds_the_chats_state():
    tracer = Tracer(MemoryTraceStore(), MemoryChatStore(), MemoryGraphStore())
    reading = anyio.Event()

    async def turn() -> None:
        with entered("chat-1", "turn:1"):
            async with tracer.order.access("chat-1", "read"):
                reading.set()
                await anyio.sleep(0.02)  # the read takes a while

    async def job() -> None:
        await reading.wait()
        with entered("chat-1", "job:job-1"):
            await tracer.job_finished(finished_job("job-1"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(turn)
        tg.start_soon(job)
    await tracer.flush("chat-1")
    written = tracer.recorder.traces.events["chat-1"]  # type: ignore[union-attr]
    assert [(e.scope, type(e).__name__) for e in written] == [
        ("turn:1", "MarkEvent"),
        ("job:job-1", "JobTraceEvent"),
    ]


async def test_a_strict_replay_holds_a_unit_where_its_recording_ended():
    events = [
        MarkEvent(seq=0, scope="turn:1", mark="turn_started", turn=1),
        job_event("job-1", seq=1),
    ]
    cassette = Cassette(events)
    await cassette.gate("turn:1", 0)
    cassette.passed("turn:1", 0)
    await cassette.gate("job:job-1", 0)  # recorded: passes
    cassette.passed("job:job-1", 0)
    with anyio.move_on_after(0.1) as held:
        await cassette.gate("job:job-1", 1)  # never recorded: the session stopped before it
    assert held.cancelled_caught
    cassette.close()
    with anyio.fail_after(1):
        await cassette.gate("job:job-1", 1)  # released once the replay is over


async def test_a_fork_lets_a_unit_run_past_its_recording():
    events = [MarkEvent(seq=0, scope="turn:1", mark="turn_started", turn=1)]
    cassette = Cassette(events, fork_turn=1)
    with anyio.fail_after(1):
        await cassette.gate("job:job-1", 0)


RECORDED = [
    MarkEvent(seq=0, scope="turn:1", mark="turn_started", turn=1),
    MarkEvent(seq=1, scope="turn:1", mark="read"),
    InboundFrameEvent(seq=2, scope="learner", turn=1, frame='{"type":"abort"}'),
    MarkEvent(seq=3, scope="learner", mark="read"),
]


@pytest.mark.parametrize("replay", [False, True], ids=["recording", "replay"])
@pytest.mark.parametrize("unit", ["turn:1", "learner"])
async def test_a_sync_point_returns_to_its_unit_without_a_scheduling_point(replay, unit):
    """What follows a sync point (a claim, a release) runs in the loop pass the sync point
    passed in: no other unit can act in between, in the recording or in its replay."""
    ticker = Ticker()
    player = Cassette(RECORDED) if replay else None
    tracer = WatchedTracer(MemoryTraceStore(), MemoryChatStore(), MemoryGraphStore(), player=player)
    tracer.ticker = ticker
    after: list[int] = []

    async def learner() -> None:
        if unit == "learner":
            await tracer.inbound("chat-1", '{"type":"abort"}')
            after.append(ticker.ticks)
            async with tracer.order.access("chat-1", "read"):
                pass
            after.append(ticker.ticks)

    async def turn() -> None:
        with entered("chat-1", "turn:1") as scope:
            await tracer.order.sync(scope, MarkEvent(seq=0, mark="turn_started", turn=1))
            if unit == "turn:1":
                after.append(ticker.ticks)
            async with tracer.order.access("chat-1", "read"):
                pass
            if unit == "turn:1":
                after.append(ticker.ticks)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker.run)
            async with anyio.create_task_group() as units:
                units.start_soon(turn)
                units.start_soon(learner)
            tg.cancel_scope.cancel()
    passed = [at for event, at in tracer.emitted_at if event.scope == unit]
    assert len(passed) == len(after) == 2
    assert after == passed  # no loop pass between passing a sync point and going on


async def test_a_turn_releases_and_the_learner_claims_in_the_pass_of_their_sync_point(
    tmp_path: Path,
):
    """The known race, end to end: the learner's claim of the chat follows its frame's
    sync point, a turn's release follows its checkpoint, each in the same loop pass (the
    turn slot is not in the trace; only this keeps a replay's order the recorded one)."""
    changes: list[tuple[bool, int]] = []  # (turn running?, loop pass) whenever it changes
    running: dict[str, bool] = {}
    ticker = Ticker()
    settings = Settings(data_dir=tmp_path)
    stores = build_stores(tmp_path)
    tracer = WatchedTracer(stores.traces, stores.chats, stores.graph, config=role_config(settings))
    tracer.ticker = ticker
    model = ScriptedModel([text_reply("one"), text_reply("two")])

    async with anyio.create_task_group() as tg:
        async with recorded_services(settings, model, stores, tracer) as services:
            chat = (await services.chats.create_record()).id
            connection = Connection(chat)

            def look(ticks: int) -> None:
                now = services.turns.is_running(chat)
                if now != running.get(chat, False):
                    changes.append((now, ticks))
                    running[chat] = now

            ticker.look = look
            tg.start_soon(ticker.run)
            for text in ("hello", "again"):
                await receive(services, connection, frame("user_message", text=text))
                await settle(services, chat)
        tg.cancel_scope.cancel()
    frames = [at for e, at in tracer.emitted_at if isinstance(e, InboundFrameEvent)]
    checkpoints = [at for e, at in tracer.emitted_at if isinstance(e, CheckpointEvent)]
    assert changes == [
        (True, frames[0]),
        (False, checkpoints[0]),
        (True, frames[1]),
        (False, checkpoints[1]),
    ]
