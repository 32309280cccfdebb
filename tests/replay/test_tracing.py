"""The recorder: structural keys, canonical hashes, per-unit values, containment."""

from __future__ import annotations

import anyio
import msgspec

from backend.replay.cassette import Cassette
from backend.tracing.hashing import request_hash
from backend.tracing.player import ReplayDivergence
from backend.tracing.tracer import Tracer
from backend.tracing.units import entered
from shared_contracts.chat import ChatRecord
from shared_contracts.model_io import ModelMessage, ModelRequest, ToolSpec
from shared_contracts.trace import ClockEvent, IdEvent, ModelCallEvent
from tests.fakes import (
    FixedClock,
    MemoryChatStore,
    MemoryGraphStore,
    MemoryTraceStore,
    ScriptedModel,
    SequentialIds,
    text_reply,
)


def request(text: str = "hi", role: str = "teacher", params: dict | None = None) -> ModelRequest:
    tools = [ToolSpec(name="t", description="d", parameters=params or {"a": 1, "b": 2})]
    return ModelRequest(role=role, messages=[ModelMessage(role="user", content=text)], tools=tools)  # type: ignore[arg-type]


async def drain(model, req: ModelRequest) -> None:
    async for _ in model.stream(req):
        pass


def tracer_on(traces: MemoryTraceStore, **kw) -> Tracer:
    return Tracer(traces, MemoryChatStore(), MemoryGraphStore(), timer=lambda: 0.0, **kw)


def test_request_hash_is_canonical_and_content_sensitive():
    assert request_hash(request(params={"a": 1, "b": 2})) == request_hash(
        request(params={"b": 2, "a": 1})
    )
    assert request_hash(request("hi")) != request_hash(request("hi!"))


async def test_model_calls_get_structural_keys_per_unit_and_role():
    traces = MemoryTraceStore()
    tracer = tracer_on(traces)
    model = tracer.model(ScriptedModel([text_reply("a"), text_reply("b"), text_reply("c")]))
    with entered("chat-1", "turn:7"):
        await drain(model, request())
        await drain(model, request("again"))
        await drain(model, request(role="extractor"))
    await tracer.flush("chat-1")  # calls are queued with their unit's events, not written each
    calls = [e for e in traces.events["chat-1"] if isinstance(e, ModelCallEvent)]
    assert [c.key for c in calls] == ["turn:7/teacher#0", "turn:7/teacher#1", "turn:7/extractor#0"]
    assert calls[0].response is not None and calls[0].response.content == "a"
    assert calls[0].request_hash == request_hash(request())
    assert [e.seq for e in traces.events["chat-1"]] == [0, 1, 2]


async def test_a_job_task_is_its_own_unit_even_while_its_turn_goes_on():
    traces = MemoryTraceStore()
    tracer = tracer_on(traces)
    clock = tracer.clock(FixedClock())
    ids = tracer.ids(SequentialIds())
    model = tracer.model(ScriptedModel([text_reply("x")] * 4))

    async def job() -> None:
        clock.now()
        await drain(model, request(role="researcher"))
        ids.new("note")

    with entered("chat-1", "turn:2"):
        async with anyio.create_task_group() as tg:
            tg.start_soon(job, name="job:job-9")
            clock.now()
            await drain(model, request())
            ids.new("msg")
    await tracer.flush("chat-1")
    events = traces.events["chat-1"]
    keys = {e.key for e in events if isinstance(e, ModelCallEvent)}
    assert keys == {"turn:2/teacher#0", "job:job-9/researcher#0"}
    assert {e.scope for e in events if isinstance(e, ClockEvent)} == {"turn:2", "job:job-9"}
    assert [(e.scope, e.prefix) for e in events if isinstance(e, IdEvent)] in (
        [("turn:2", "msg"), ("job:job-9", "note")],
        [("job:job-9", "note"), ("turn:2", "msg")],
    )


async def test_provider_secrets_never_reach_the_trace():
    traces = MemoryTraceStore()
    tracer = tracer_on(traces)
    model = tracer.model(ScriptedModel([text_reply("ok")]))
    with entered("chat-1", "turn:1"):
        await drain(model, request())
    await tracer.flush("chat-1")
    text = msgspec.json.encode(traces.events["chat-1"]).decode().lower()
    assert "api_key" not in text and "authorization" not in text and "bearer" not in text


async def test_the_cassette_answers_by_key_and_refuses_a_changed_request():
    traces = MemoryTraceStore()
    recorder = tracer_on(traces)
    with entered("chat-1", "turn:1"):
        await drain(recorder.model(ScriptedModel([text_reply("recorded answer")])), request())
    await recorder.flush("chat-1")
    cassette = Cassette(traces.events["chat-1"])
    player = tracer_on(MemoryTraceStore(), player=cassette)
    replay = player.model(ScriptedModel([]))  # never called: the cassette answers
    with entered("chat-1", "turn:1"):
        got = [e async for e in replay.stream(request())]
    assert got[-1].message.content == "recorded answer"  # type: ignore[union-attr]
    with entered("chat-1", "turn:1"):
        try:
            await drain(replay, request("a changed prompt"))
        except ReplayDivergence:
            pass
        else:
            raise AssertionError("a changed request must diverge")
    (divergence,) = cassette.divergences
    assert "turn:1/teacher#1" in divergence.where  # the second call has no recording
    with entered("chat-1", "turn:1"):
        player.units.counters.clear()
        try:
            await drain(replay, request("a changed prompt"))
        except ReplayDivergence:
            pass
    changed = cassette.divergences[-1]
    assert "request differs" in changed.where
    assert "-hi" in changed.diff and "+a changed prompt" in changed.diff


async def test_a_failing_trace_store_never_breaks_the_lesson():
    class Broken(MemoryTraceStore):
        async def append(self, chat_id, events):
            raise OSError("disk full")

    from tests.flows.harness import FlowHarness

    chats = MemoryChatStore()
    tracer = Tracer(Broken(), chats, MemoryGraphStore())
    model = ScriptedModel([text_reply("Still teaching.")])
    flow = FlowHarness(model=model, chats=chats, observer=tracer)
    chat = await flow.new_chat()
    assert await flow.say(chat, "hello") == "stop"
    assert flow.chats.records[chat].messages[-1].parts[0].text == "Still teaching."  # type: ignore[union-attr]


async def test_a_disabled_tracer_records_nothing_and_wraps_nothing():
    tracer = Tracer()
    model = ScriptedModel([])
    assert tracer.model(model) is model
    await tracer.chat_created(
        ChatRecord(id="c", title="t", created_at=FixedClock().now(), updated_at=FixedClock().now())
    )
    await tracer.flush("c")


async def test_a_recording_keeps_no_counters_for_finished_turns():
    """Ordinals a recording needs (model calls, steps) live while their turn runs; clock,
    id and sync-point ordinals are kept only by a replay."""
    from tests.flows.harness import FlowHarness

    chats = MemoryChatStore()
    tracer = Tracer(MemoryTraceStore(), chats, MemoryGraphStore())
    model = tracer.model(ScriptedModel([text_reply(f"turn {n}") for n in range(30)]))
    flow = FlowHarness(model=model, chats=chats, observer=tracer)
    chat = await flow.new_chat()
    for n in range(30):
        assert await flow.say(chat, f"hello {n}") == "stop"
        assert tracer.counters() == 0
    await tracer.flush(chat)
    calls = [e for e in tracer.recorder.traces.events[chat] if isinstance(e, ModelCallEvent)]  # type: ignore[union-attr]
    assert [c.key for c in calls][:2] == ["turn:1/teacher#0", "turn:2/teacher#0"]


def test_the_resumed_transcript_hash_equals_the_whole_one():
    import random

    from backend.tracing.hashing import TranscriptHasher, digest
    from shared_contracts.chat import Message, TextPart

    at = FixedClock().now()

    def message(n: int) -> Message:
        return Message(
            id=f"m{n}", role="user", turn=n, created_at=at, parts=[TextPart(text=f"t{n}")]
        )

    rng = random.Random(7)
    hasher = TranscriptHasher()
    messages: list[Message] = []
    for step in range(200):
        roll = rng.random()
        if roll < 0.6 or not messages:
            messages = [*messages, message(step)]  # append (copy-on-write)
        elif roll < 0.85:
            i = rng.randrange(max(0, len(messages) - 3), len(messages))
            messages = [*messages[:i], message(1000 + step), *messages[i + 1 :]]  # replace late
        elif roll < 0.95:
            i = rng.randrange(len(messages))
            messages = [*messages[:i], message(2000 + step), *messages[i + 1 :]]  # replace any
        else:
            messages = [message(3000 + step + n) for n in range(len(messages))]  # all new
        chat = "chat-1" if step % 7 else "chat-2"
        assert hasher.digest(chat, messages) == digest(messages)
    assert hasher.digest("chat-3", []) == digest([])
