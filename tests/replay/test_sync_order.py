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


async def test_a_sync_point_is_written_before_another_unit_passes_one():
    """Its flush happens inside the sync point: once a unit has passed one it runs on to
    its next await, so what it does right after is ordered with it."""
    traces = SlowTraces()
    tracer = Tracer(traces, MemoryChatStore(), MemoryGraphStore())
    seen: list[int] = []

    async def job() -> None:
        with tracer.enter("chat-1", "job:job-1"):
            await tracer.job("chat-1", "job-1", "finished")

    async def turn() -> None:
        await traces.started.wait()
        with tracer.enter("chat-1", "turn:1"):
            async with tracer.access("chat-1", "read"):
                seen.append(len(traces.events.get("chat-1", [])))

    async with anyio.create_task_group() as tg:
        tg.start_soon(job)
        tg.start_soon(turn)
    assert seen == [1]  # the turn's read waited for the job's sync point to be written


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
