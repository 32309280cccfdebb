"""Sync points order units identically in a recording and its replay (issue 7's race)."""

from __future__ import annotations

import anyio

from backend.server.replay import Cassette
from backend.server.tracing import Tracer
from shared_contracts.trace import JobTraceEvent, MarkEvent
from tests.fakes import MemoryChatStore, MemoryGraphStore, MemoryTraceStore


class SlowTraces(MemoryTraceStore):
    """A trace store whose appends take a while (and so can be interrupted)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = anyio.Event()

    async def append(self, chat_id, events) -> None:
        self.started.set()
        await anyio.sleep(0.05)
        await super().append(chat_id, events)


def job_event(job: str, seq: int = 0) -> JobTraceEvent:
    return JobTraceEvent(seq=seq, scope=f"job:{job}", job_id=job, phase="finished")


async def test_a_flush_cancelled_at_shutdown_still_writes_its_events():
    traces = SlowTraces()
    tracer = Tracer(traces, MemoryChatStore(), MemoryGraphStore())
    tracer.emit("chat-1", job_event("job-1"))
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
        with tracer.enter("chat-1", "job:job-1"):
            await tracer.job("chat-1", "job-1", "finished")
            passed.append("job:job-1")

    async def turn() -> None:
        with tracer.enter("chat-1", "turn:1"):
            async with tracer.access("chat-1", "read"):
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
        with tracer.enter("chat-1", "turn:1"):
            async with tracer.access("chat-1", "read"):
                reading.set()
                await anyio.sleep(0.02)  # the read takes a while

    async def job() -> None:
        await reading.wait()
        with tracer.enter("chat-1", "job:job-1"):
            await tracer.job("chat-1", "job-1", "finished")

    async with anyio.create_task_group() as tg:
        tg.start_soon(turn)
        tg.start_soon(job)
    await tracer.flush("chat-1")
    written = tracer._traces.events["chat-1"]  # type: ignore[union-attr]
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
