"""Seeded random sessions recorded live replay strictly (issue 7: "any recorded session
replays identically"), and the divergence classes the generator found stay fixed: a job
that timed out, a model call whose caller stopped at its final message, a chat write that
failed, a shutdown while jobs ran beside the turn (a job queued, one saving its state, a
turn cut right after a sync point); sessions ended with End session (the flush).
`make soak` runs the long loop (120 sessions, ~1 min)."""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections import Counter
from pathlib import Path

import anyio
import msgspec
import pytest

from backend.agent.litellm_model import LitellmChatModel
from backend.agent.roles import build_subagents
from backend.replay.runner import run_replay
from backend.server.dispatch import receive
from backend.server.hub import Connection
from backend.server.recording import recording_tracer
from backend.server.settings import Settings
from backend.server.stores import build_stores
from backend.tracing.tracer import Tracer
from backend.tracing.units import entered
from shared_contracts.model_io import ModelDone, ModelMessage, ModelRequest, TextChunk
from shared_contracts.trace import (
    ClockEvent,
    JobTraceEvent,
    MarkEvent,
    ModelCallEvent,
    OutboundFrameEvent,
    ToolRunEvent,
)
from shared_contracts.trace_blobs import expand_blobs
from tests.fakes import (
    FixedClock,
    MemoryChatStore,
    MemoryGraphStore,
    MemoryTraceStore,
    ScriptedModel,
    text_reply,
    tool_reply,
)
from tests.golden.record import recorded_services, settle
from tests.replay.random_sessions import (
    JOB_TIMEOUT_S,
    PLAN,
    SubAgentModel,
    check_session,
    divergence_class,
    frame,
)

FAST_SEEDS = (1, 3, 4, 8, 13, 29)
"""Cover the mix: scripted and offline teachers, job timeouts, failures, a shutdown
mid-turn, two sockets at once, aborts (checked below)."""
SOAK_SESSIONS = 120


def _run(seeds) -> tuple[Counter, Counter, list[str], list[str]]:
    """(features seen, divergence classes, divergences of sessions that ran to their end,
    divergences of sessions whose server was shut down mid-turn)."""
    features: Counter = Counter()
    classes: Counter = Counter()
    diverged: list[str] = []
    stopped: list[str] = []
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            # Its own event loop per session, as each recorded server had.
            recorded, divergence = anyio.run(check_session, Path(tmp), seed)
        features.update(recorded.features)
        features.update(f"job_{fate}" for fate in recorded.job_fates)
        if divergence:
            classes[divergence_class(divergence)] += 1
            shut = "shutdown" in recorded.features
            (stopped if shut else diverged).append(f"seed {seed}: {divergence}")
    return features, classes, diverged, stopped


def test_generated_sessions_replay_identically():
    features, classes, diverged, stopped = _run(FAST_SEEDS)
    assert not diverged + stopped, f"{dict(classes)}\nfirst: {(diverged + stopped)[0]}"
    wanted_all = ("scripted", "offline", "abort", "answer", "two_sockets_at_once", "end_session")
    for wanted in wanted_all:
        assert features[wanted], (wanted, features)
    assert features["shutdown"] and features["job_slow"] and features["job_error"], features


@pytest.mark.soak
def test_a_hundred_and_twenty_generated_sessions_replay_identically():
    """Every session replays identically, those whose server was shut down while a turn
    and jobs ran included (counted apart in the figures): their replay shuts down where
    the recording did. `LH_REPLAY_SESSIONS` runs more (e.g. 480)."""
    sessions = int(os.environ.get("LH_REPLAY_SESSIONS", SOAK_SESSIONS))
    started = time.perf_counter()
    features, classes, diverged, stopped = _run(range(1000, 1000 + sessions))
    took = time.perf_counter() - started
    print(
        f"\n{sessions} sessions in {took:.0f} s; features {dict(features)};"
        f" diverged {len(diverged)}, shut down and diverged {len(stopped)}: {dict(classes)}"
    )
    assert not diverged, f"{len(diverged)} diverged {dict(classes)}\nfirst: {diverged[0]}"
    assert not stopped, f"{len(stopped)} shut down and diverged\nfirst: {stopped[0]}"
    assert features["shutdown"] >= 5 and features["job_slow"] >= 10, features
    assert features["scripted"] >= 20 and features["two_sockets_at_once"] >= 20, features
    assert features["end_session"] >= 20, features


# -- the classes found, each pinned by a deterministic session --------------------------


async def _record_job_session(data: Path, fates: list[str], teacher_steps) -> str:
    """A chat on a scripted teacher with model-backed sub-agents playing `fates`."""
    settings = Settings(
        data_dir=data,
        model="scripted/t",
        subagent_model="scripted/sub",
        job_timeout_s=JOB_TIMEOUT_S,
    )
    stores = build_stores(data)
    tracer = recording_tracer(stores, settings)
    sub = SubAgentModel(random.Random(0), [], script=fates)
    agents = build_subagents(settings, lambda _: tracer.model(sub))
    async with recorded_services(
        settings, ScriptedModel(teacher_steps), stores, tracer, subagents=agents
    ) as services:
        record = await services.chats.create_record()
        await receive(services, Connection(record.id), frame("user_message", text="go"))
        await settle(services, record.id)
        await tracer.flush(record.id)
    return record.id


async def test_a_job_that_timed_out_replays_at_once(tmp_path: Path):
    """The job's slow stream was cut by its timeout: the replay times it out at the cut
    (not after the wall-clock budget, 120 s by default) under the recorded limit."""
    research = tool_reply([("c1", "research", {"question": "why?"})])
    steps = [research, text_reply("Meanwhile, read on."), text_reply("The note failed.")]
    chat = await _record_job_session(tmp_path / "data", ["slow"], steps)
    stores = build_stores(tmp_path / "data")
    recorded = expand_blobs(await stores.traces.read(chat))
    finished = [e for e in recorded if isinstance(e, JobTraceEvent) and e.phase == "finished"]
    assert finished[0].job is not None and finished[0].job.error == "timed out after 0.05 s"
    _litellm_imported()
    started = time.perf_counter()
    result = await run_replay(stores, chat, tmp_path / "replay", stall_s=2.0)
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    assert time.perf_counter() - started < 1.0
    again = [e for e in result.events if isinstance(e, JobTraceEvent) and e.phase == "finished"]
    assert again[0].job == finished[0].job


async def test_a_call_is_recorded_when_its_final_message_arrives():
    """A caller that stops reading at `ModelDone` (structured sub-agent answers) leaves the
    stream open until garbage collection: the call is recorded then, not at close, so a
    unit's calls are recorded in the order they were made."""
    traces = MemoryTraceStore()
    tracer = Tracer(traces, MemoryChatStore(), MemoryGraphStore(), timer=lambda: 0.0)
    model = tracer.model(ScriptedModel([text_reply("first"), text_reply("second")]))
    request = ModelRequest(role="researcher", messages=[ModelMessage(role="user", content="q")])
    streams = []
    with entered("c1", "job:job-1"):
        for _ in range(2):
            stream = model.stream(request)
            streams.append(stream)  # kept open, as an unfinished generator is
            async for event in stream:
                if isinstance(event, ModelDone):
                    break
    await tracer.flush("c1")
    calls = [e for e in traces.events["c1"] if isinstance(e, ModelCallEvent)]
    assert [c.key for c in calls] == ["job:job-1/researcher#0", "job:job-1/researcher#1"]
    assert calls[0].response is not None and calls[0].response.content == "first"
    for stream in streams:
        await stream.aclose()
    await tracer.flush("c1")
    assert len([e for e in traces.events["c1"] if isinstance(e, ModelCallEvent)]) == 2


async def test_a_failed_chat_write_is_a_sync_point_and_replays_to_a_cut_recording(
    tmp_path: Path,
):
    """`plan_init` twice: the second write is refused ("a plan already exists") after it saw
    the chat. It is recorded as a sync point; a recording that ends right after it (the
    server stopped) replays up to there (before: the replay held the turn at the refused
    write, waiting for the turn's next recorded sync point, and missed the tool run)."""
    twice = tool_reply([("p1", "plan_init", PLAN), ("p2", "plan_init", PLAN)])
    chat = await _record_job_session(tmp_path / "data", [], [twice, text_reply("Planned.")])
    stores = build_stores(tmp_path / "data")
    events = expand_blobs(await stores.traces.read(chat))
    refused = next(e for e in events if isinstance(e, ToolRunEvent) and e.error)
    assert "a plan already exists" in refused.error
    before = [e for e in events if e.seq < refused.seq and e.scope == "turn:1"]
    marks = [e.mark for e in before if isinstance(e, MarkEvent)]
    assert marks[-2:] == ["write", "write"]  # the plan write, then the refused one
    # The same session, stopped after the refused write's tool run, as the turn's next
    # write (its clock drawn) waited.
    end = next(e.seq for e in events if e.seq > refused.seq and isinstance(e, MarkEvent))
    cut = [e for e in events if e.seq < end]
    assert isinstance(cut[-1], ClockEvent) and isinstance(cut[-2], OutboundFrameEvent)
    data = tmp_path / "cut"
    await build_stores(data).traces.append(chat, cut)
    result = await run_replay(build_stores(data), chat, tmp_path / "replay", stall_s=2.0)
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    assert result.ends_inside_turn == 1


# -- shutdowns with jobs running beside the turn ----------------------------------------


class StuckSub:
    """A sub-agents' model that streams one chunk, then nothing more until cancelled."""

    name = "stuck-sub"

    def __init__(self) -> None:
        self.streaming = anyio.Event()

    async def stream(self, request: ModelRequest):
        yield TextChunk(text='{"title": ')
        self.streaming.set()
        await anyio.sleep_forever()


async def _record_stopped_jobs(
    data: Path, stop_when, clock: FixedClock | None = None, sub=None
) -> str:
    """A chat whose turn submits two research jobs on a slow sub-agent, one slot per chat
    (the second queues); the server is shut down when `stop_when(services, server)`
    returns."""
    settings = Settings(
        data_dir=data,
        model="scripted/t",
        subagent_model="scripted/sub",
        job_timeout_s=30.0,
        max_jobs_per_chat=1,
    )
    stores = build_stores(data)
    tracer = recording_tracer(stores, settings)
    sub = sub or SubAgentModel(random.Random(0), [], script=["slow", "slow"])
    agents = build_subagents(settings, lambda _: tracer.model(sub))
    two = tool_reply(
        [("r1", "research", {"question": "why?"}), ("r2", "research", {"question": "how?"})]
    )
    with anyio.CancelScope() as server:
        async with recorded_services(
            settings,
            ScriptedModel([two, text_reply("Both are on their way.")]),
            stores,
            tracer,
            subagents=agents,
            clock=clock,
        ) as services:
            record = await services.chats.create_record()
            await receive(services, Connection(record.id), frame("user_message", text="go"))
            await stop_when(services, server)
            server.cancel()
            await anyio.sleep_forever()
    return record.id


def _job_units(events) -> dict[str, list[str]]:
    units: dict[str, list[str]] = {}
    for event in events:
        if event.scope.startswith("job:"):
            units.setdefault(event.scope, []).append(type(event).__name__)
    return units


def _litellm_imported() -> None:
    """Building a model-backed role imports litellm (≈ 2 s, once per process): done before
    a replay is timed, so the time is the replay's (what is checked: it does not wait at a
    stall, `stall_s`)."""
    LitellmChatModel("scripted/warm-up")


async def _replays_through_its_shutdown(data: Path, chat: str, work: Path):
    _litellm_imported()
    started = time.perf_counter()
    result = await run_replay(build_stores(data), chat, work, stall_s=2.0)
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    assert time.perf_counter() - started < 1.0
    return result


async def test_a_shutdown_with_a_job_streaming_and_one_queued_replays_identically(
    tmp_path: Path,
):
    """The first job's stream is cut, the second is cancelled in the queue for its slot
    (its only events: its cancellation's clock and the write settling its part). The
    replay holds the first at its cut, lets the second queue, and shuts down: before, the
    second could be given the slot and make a call that was never recorded."""

    sub = StuckSub()

    async def when_streaming(services, server) -> None:
        await sub.streaming.wait()

    chat = await _record_stopped_jobs(tmp_path / "data", when_streaming, sub=sub)
    events = expand_blobs(await build_stores(tmp_path / "data").traces.read(chat))
    units = _job_units(events)
    assert sorted(units.values()) == sorted(
        [
            ["ClockEvent", "MarkEvent"],  # queued: cancelled, settled
            ["ClockEvent", "ModelCallEvent", "ClockEvent", "MarkEvent"],  # cut in its stream
        ]
    )
    result = await _replays_through_its_shutdown(tmp_path / "data", chat, tmp_path / "r")
    assert set(units) <= set(result.shutdown_cut)


class StopAtJobStart(FixedClock):
    """A clock that shuts the server down (`stop`) as the first job draws its start time:
    the job is then cancelled at its next checkpoint, the save of its `running` state."""

    stop = staticmethod(lambda: None)

    def now(self):
        if anyio.get_current_task().name.startswith("job:") and self.stop is not None:
            self.stop()
            self.stop = None  # type: ignore[assignment]
        return super().now()


async def test_a_shutdown_as_a_job_saves_its_state_replays_identically(tmp_path: Path):
    """The first job is cancelled as it saves its `running` state (its start clock drawn,
    no call made): the replay holds it before its first call, which its recording never
    made, and shuts down there (before: that call was a divergence)."""
    clock = StopAtJobStart()

    async def never(services, server) -> None:
        clock.stop = server.cancel
        await anyio.sleep_forever()

    chat = await _record_stopped_jobs(tmp_path / "data", never, clock=clock)
    events = expand_blobs(await build_stores(tmp_path / "data").traces.read(chat))
    assert sorted(_job_units(events).values()) == sorted(
        [
            ["ClockEvent", "ClockEvent", "MarkEvent"],  # started, cancelled in its save
            ["ClockEvent", "MarkEvent"],  # queued
        ]
    )
    await _replays_through_its_shutdown(tmp_path / "data", chat, tmp_path / "r")


def test_divergence_classes_mask_numbers_and_ids():
    text = "FIRST DIVERGENCE at recorded event #584: model call job:job-0002/visual_maker#0"
    assert divergence_class(text) == "model call job:job-N/visual_maker#N"
    assert msgspec.json.decode(frame("abort")) == {"type": "abort"}
