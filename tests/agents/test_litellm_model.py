"""LitellmChatModel against a real loopback fake OpenAI server (no network)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import anyio
import pytest

from backend.agent.litellm_model import LitellmChatModel
from backend.core.errors import ModelError
from shared_contracts.model_io import (
    ModelDone,
    ModelEvent,
    ModelMessage,
    ModelRequest,
    ModelToolCall,
    TextChunk,
    ToolCallChunk,
    ToolSpec,
)
from tests.agents.fake_openai import (
    Fail,
    FakeOpenAI,
    Hang,
    Reset,
    Stream,
    finish_chunk,
    stream_text,
    stream_tool_calls,
    text_chunks,
    tool_call_chunks,
)


class SleepRecorder:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def make_model(
    fake: FakeOpenAI, sleep: SleepRecorder | None = None, **kw: object
) -> LitellmChatModel:
    return LitellmChatModel(
        "openai/fake", api_base=fake.base_url, api_key="x", sleep=sleep or SleepRecorder(), **kw
    )


def request(**kw: object) -> ModelRequest:
    messages = [
        ModelMessage(role="system", content="You teach."),
        ModelMessage(role="user", content="teach me"),
    ]
    return ModelRequest(role="teacher", messages=messages, **kw)  # type: ignore[arg-type]


async def collect(model: LitellmChatModel, req: ModelRequest) -> list[ModelEvent]:
    return [e async for e in model.stream(req)]


async def collect_into(model: LitellmChatModel, req: ModelRequest, seen: list[ModelEvent]) -> None:
    async for event in model.stream(req):
        seen.append(event)


def test_module_import_does_not_import_litellm() -> None:
    code = "import sys, backend.agent.litellm_model; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_building_a_model_warms_litellm_without_calling_the_provider(fake: FakeOpenAI) -> None:
    """The first call's one-off work (imports, tokenizer, TLS context, the SDK's chunk
    parsing) happens at start-up, answered in process: the provider sees no request."""
    import litellm

    from backend.agent import litellm_warmup

    answered = litellm_warmup.DRY_CALLS[0]
    LitellmChatModel("openai/warm-check", api_base=fake.base_url, api_key="x")
    assert litellm_warmup.DRY_CALLS[0] == answered + 1  # the SDK's path, answered in process
    LitellmChatModel("anthropic/warm-check", api_key="x")  # a provider it cannot answer
    assert fake.requests == []
    assert "encoding" in vars(litellm.main)  # the bundled tokenizer is loaded


async def test_text_streams_chunk_by_chunk(fake: FakeOpenAI) -> None:
    fake.script(stream_text("Fractions name parts of a whole."))
    events = await collect(make_model(fake), request())
    texts = [e.text for e in events if isinstance(e, TextChunk)]
    assert texts == ["Fractions ", "name ", "parts ", "of ", "a ", "whole."]
    done = events[-1]
    assert isinstance(done, ModelDone)
    assert [e for e in events if isinstance(e, ModelDone)] == [done]
    assert done.message.content == "Fractions name parts of a whole."
    assert done.finish_reason == "stop"
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (11, 7)
    assert done.usage.cost_usd == 0.0  # "fake" is not in the cost map
    body = fake.requests[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": "You teach."}


async def test_cost_comes_from_the_cost_map_for_a_known_model(fake: FakeOpenAI) -> None:
    fake.script(stream_text("hi"))
    model = LitellmChatModel("openai/gpt-4o-mini", api_base=fake.base_url, api_key="x")
    done = (await collect(model, request()))[-1]
    assert isinstance(done, ModelDone)
    assert done.usage.cost_usd > 0


async def test_tool_call_fragments_assemble_and_pass_raw_args(fake: FakeOpenAI) -> None:
    raw = '{"goal": "Fractions", "nodes": [{"id": "n1", "title": "Parts"}]}'
    fake.script(
        Stream(
            [
                *text_chunks("Let me ", "plan."),
                *tool_call_chunks(0, "call_1", "plan_init", raw[:10], raw[10:30], raw[30:]),
                *finish_chunk("tool_calls"),
            ]
        )
    )
    tools = [ToolSpec(name="plan_init", description="Start a plan", parameters={"type": "object"})]
    events = await collect(make_model(fake), request(tools=tools))
    frags = [e for e in events if isinstance(e, ToolCallChunk)]
    assert [(f.index, f.id, f.name) for f in frags][:1] == [(0, "call_1", "plan_init")]
    assert all(f.id == "" and f.name == "" for f in frags[1:])
    assert "".join(f.arguments for f in frags) == raw
    done = events[-1]
    assert isinstance(done, ModelDone)
    assert done.finish_reason == "tool_calls"
    assert done.message.content == "Let me plan."
    assert done.message.tool_calls == [ModelToolCall(id="call_1", name="plan_init", arguments=raw)]
    assert fake.requests[0]["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "plan_init",
                "description": "Start a plan",
                "parameters": {"type": "object"},
            },
        }
    ]


async def test_two_parallel_tool_calls_and_malformed_json_pass_through(fake: FakeOpenAI) -> None:
    fake.script(
        stream_tool_calls(
            [("call_a", "research", '{"question": "why?"}'), ("call_b", "visual", '{"brief": ')]
        )
    )
    done = (await collect(make_model(fake), request()))[-1]
    assert isinstance(done, ModelDone)
    assert done.message.tool_calls == [
        ModelToolCall(id="call_a", name="research", arguments='{"question": "why?"}'),
        ModelToolCall(id="call_b", name="visual", arguments='{"brief": '),
    ]


async def test_transcript_is_sent_in_openai_format(fake: FakeOpenAI) -> None:
    fake.script(stream_text("ok"))
    call = ModelToolCall(id="call_1", name="quiz", arguments='{"x": 1}')
    req = ModelRequest(
        role="teacher",
        messages=[
            ModelMessage(role="user", content="hi"),
            ModelMessage(role="assistant", content="", tool_calls=[call]),
            ModelMessage(role="tool", tool_call_id="call_1", content='{"kind": "graded"}'),
        ],
        temperature=0.2,
        max_tokens=50,
    )
    await collect(make_model(fake), req)
    body = fake.requests[0]
    assistant = body["messages"][1]
    assert assistant.get("content") is None  # litellm may drop a null content
    assert assistant["role"] == "assistant"
    assert assistant["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "quiz", "arguments": '{"x": 1}'},
        }
    ]
    assert body["messages"][2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": '{"kind": "graded"}',
    }
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 50


async def test_response_schema_is_forwarded_as_response_format(fake: FakeOpenAI) -> None:
    schema = {"title": "Grade", "type": "object", "properties": {"ok": {"type": "boolean"}}}
    fake.script(stream_text('{"ok": true}', word_chunks=False))
    done = (await collect(make_model(fake), request(response_schema=schema)))[-1]
    assert isinstance(done, ModelDone)
    assert json.loads(done.message.content) == {"ok": True}
    assert fake.requests[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Grade", "schema": schema},
    }


async def test_429_with_retry_after_is_retried_after_that_delay(fake: FakeOpenAI) -> None:
    fake.script(Fail(429, headers={"Retry-After": "3"}), stream_text("back"))
    sleep = SleepRecorder()
    events = await collect(make_model(fake, sleep), request())
    assert sleep.calls == [3.0]
    assert len(fake.requests) == 2
    assert isinstance(events[-1], ModelDone)
    assert events[-1].message.content == "back"


async def test_retry_after_is_capped(fake: FakeOpenAI) -> None:
    fake.script(Fail(429, headers={"Retry-After": "3600"}), stream_text("ok"))
    sleep = SleepRecorder()
    await collect(make_model(fake, sleep, max_backoff=5.0), request())
    assert sleep.calls == [5.0]


async def test_500_three_times_is_a_retryable_model_error(fake: FakeOpenAI) -> None:
    fake.script(Fail(500), Fail(503), Fail(500), stream_text("never"))
    sleep = SleepRecorder()
    with pytest.raises(ModelError) as info:
        await collect(make_model(fake, sleep), request())
    assert info.value.retryable is True
    assert len(fake.requests) == 3
    assert sleep.calls == [0.5, 1.0]  # exponential backoff between the three attempts
    assert "after 3 attempts" in str(info.value)  # the detail, for the operator's log
    assert_learner_reads(info.value, "failed on the provider's side")


def assert_learner_reads(error: ModelError, phrase: str) -> None:
    """The learner's message names the model and what to do, not the provider's error."""
    public = error.public_message()
    assert phrase in public and "openai/fake" in public
    assert "Exception" not in public and "litellm" not in public


async def test_429_every_time_tells_the_learner_to_wait(fake: FakeOpenAI) -> None:
    fake.script(Fail(429), Fail(429), Fail(429))
    with pytest.raises(ModelError) as info:
        await collect(make_model(fake, SleepRecorder()), request())
    assert_learner_reads(info.value, "rate-limited")


async def test_timeout_is_retried_then_succeeds(fake: FakeOpenAI) -> None:
    fake.script(Hang(1.0), stream_text("late"))
    sleep = SleepRecorder()
    events = await collect(make_model(fake, sleep, timeout=0.2), request())
    assert isinstance(events[-1], ModelDone)
    assert events[-1].message.content == "late"
    assert len(sleep.calls) == 1


@pytest.mark.parametrize(
    ("status", "learner_reads"),
    [(400, "could not answer"), (401, "API key"), (404, "LH_MODEL")],
)
async def test_client_errors_are_not_retried(
    fake: FakeOpenAI, status: int, learner_reads: str
) -> None:
    fake.script(Fail(status), stream_text("never"))
    sleep = SleepRecorder()
    with pytest.raises(ModelError) as info:
        await collect(make_model(fake, sleep), request())
    assert info.value.retryable is False
    assert_learner_reads(info.value, learner_reads)
    assert len(fake.requests) == 1
    assert sleep.calls == []


async def test_reset_mid_stream_raises_after_the_partial_text(fake: FakeOpenAI) -> None:
    fake.script(Reset(text_chunks("Half ", "a ")), stream_text("never"))
    sleep = SleepRecorder()
    seen: list[ModelEvent] = []
    with pytest.raises(ModelError, match="mid-stream") as info:
        await collect_into(make_model(fake, sleep), request(), seen)
    assert seen == [TextChunk(text="Half "), TextChunk(text="a ")]
    assert len(fake.requests) == 1  # no retry once text reached the caller
    assert_learner_reads(info.value, "mid-answer")
    assert sleep.calls == []


async def test_connection_refused_is_retried_then_a_typed_error() -> None:
    with FakeOpenAI() as gone:
        base = gone.base_url
    sleep = SleepRecorder()
    model = LitellmChatModel("openai/fake", api_base=base, api_key="x", sleep=sleep)
    with pytest.raises(ModelError) as info:
        await collect(model, request())
    assert info.value.retryable is True
    assert len(sleep.calls) == 2
    assert_learner_reads(info.value, "could not be reached")


async def test_a_stall_mid_stream_times_out_as_a_mid_stream_error(fake: FakeOpenAI) -> None:
    fake.script(Stream([*text_chunks("Slow ", "start"), *finish_chunk("stop")], delay=0.6))
    sleep = SleepRecorder()
    seen: list[ModelEvent] = []
    with pytest.raises(ModelError, match="mid-stream"):
        await collect_into(make_model(fake, sleep, timeout=0.2), request(), seen)
    assert seen == [TextChunk(text="Slow ")]
    assert sleep.calls == []


async def test_litellm_success_callbacks_still_see_a_streamed_call(fake: FakeOpenAI) -> None:
    # Without observers the adapter stops at litellm's closing usage chunk (skipping its
    # end-of-stream logging rebuild); with one registered, the stream runs to its end.
    import litellm  # imported here: importing it costs ~2 s
    from litellm.integrations.custom_logger import CustomLogger

    class Seen(CustomLogger):
        def __init__(self) -> None:
            super().__init__()
            self.contents: list[str] = []
            self.logged = anyio.Event()

        async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):  # type: ignore[no-untyped-def]
            self.contents.append(response_obj.choices[0].message.content)
            self.logged.set()

    seen = Seen()
    fake.script(stream_text("logged answer"), stream_text("quiet answer"))
    litellm.callbacks = [seen]
    try:
        events = await collect(make_model(fake), request())
        with anyio.fail_after(5):
            await seen.logged.wait()
    finally:
        litellm.callbacks = []
    assert seen.contents == ["logged answer"]
    assert isinstance(events[-1], ModelDone)
    assert (events[-1].usage.prompt_tokens, events[-1].usage.completion_tokens) == (11, 7)
    quiet = (await collect(make_model(fake), request()))[-1]
    assert isinstance(quiet, ModelDone)
    assert quiet.message.content == "quiet answer"
    assert (quiet.usage.prompt_tokens, quiet.usage.completion_tokens) == (11, 7)
    assert seen.contents == ["logged answer"]


async def test_the_first_stream_moves_litellm_out_of_the_collectors_reach(fake: FakeOpenAI) -> None:
    import gc

    fake.script(stream_text("hi"))
    await collect(make_model(fake), request())
    assert gc.get_freeze_count() >= 100_000  # litellm alone leaves ~390k objects behind


async def test_a_hung_provider_is_not_retried_past_the_budget(fake: FakeOpenAI) -> None:
    fake.script(Hang(1.0), stream_text("too late to matter"))
    sleep = SleepRecorder()
    model = make_model(fake, sleep, timeout=0.2, budget=0.3)  # no room for a second attempt
    with pytest.raises(ModelError) as info:
        await collect(model, request())
    assert sleep.calls == [] and "after 1 attempts" in str(info.value)
    assert_learner_reads(info.value, "took too long to answer")
