"""A trace shown while a question is open withholds that question's key everywhere it was
recorded — the model's tool call, its streamed fragments, a later request repeating it,
the tool run, the issued quiz event — and every hash computed over it."""

from __future__ import annotations

import msgspec

from backend.core.pending import find_tool_part, pending_question
from backend.core.trace_views import WITHHELD, without_key
from backend.tracing.ports import read_expanded
from backend.tracing.tracer import Tracer
from shared_contracts.trace import CheckpointEvent, ModelCallEvent
from tests.fakes import (
    MemoryChatStore,
    MemoryGraphStore,
    MemoryTraceStore,
    ScriptedModel,
    text_reply,
    tool_reply,
)
from tests.flows.harness import FlowHarness

KEY = "photosynthesis-is-the-key"
QUIZ = {
    "question": {
        "kind": "short_answer",
        "prompt": "Which process makes sugar in a leaf?",
        "accepted": [KEY],
        "explanation": f"It is {KEY}.",
    }
}


async def _recorded_open_question() -> tuple[FlowHarness, Tracer, str]:
    """A chat whose quiz is open, asked in turn 1 and repeated in turn 2's request (the
    learner wrote instead of answering)."""
    chats, traces = MemoryChatStore(), MemoryTraceStore()
    tracer = Tracer(traces, chats, MemoryGraphStore())
    steps = [tool_reply([("q1", "quiz", QUIZ)], text="A question:"), text_reply("Try it.")]
    flow = FlowHarness(model=tracer.model(ScriptedModel(steps)), chats=chats, observer=tracer)
    chat = await flow.new_chat()
    assert await flow.say(chat, "teach me") == "awaiting_answer"
    assert await flow.say(chat, "I would rather chat") == "stop"
    await tracer.flush(chat)
    return flow, tracer, chat


async def test_the_open_questions_key_is_nowhere_in_the_trace_shown():
    flow, tracer, chat = await _recorded_open_question()
    events = read_expanded(await tracer.recorder.traces.read(chat), chat)  # type: ignore[union-attr]
    assert KEY in msgspec.json.encode(events).decode()  # the trace itself holds it
    record = flow.chats.records[chat]
    pending = pending_question(record)
    assert pending is not None and pending.tool_call_id == "q1"
    found = find_tool_part(record, "q1")
    assert found is not None
    shown = without_key(events, found[2])
    text = msgspec.json.encode(shown).decode()
    assert KEY not in text
    assert "Which process makes sugar in a leaf?" in text  # the question as it was shown
    calls = [e for e in shown if isinstance(e, ModelCallEvent)]
    assert calls[1].request_hash == WITHHELD  # turn 2's request repeats the question
    assert calls[0].request_hash != WITHHELD  # turn 1's request came before it
    checkpoints = [e for e in shown if isinstance(e, CheckpointEvent)]
    assert all(c.transcript_hash == WITHHELD for c in checkpoints)
    assert len(shown) == len(events)


async def test_a_trace_with_no_key_to_withhold_is_unchanged():
    flow, tracer, chat = await _recorded_open_question()
    events = read_expanded(await tracer.recorder.traces.read(chat), chat)  # type: ignore[union-attr]
    record = flow.chats.records[chat]
    found = find_tool_part(record, "q1")
    assert found is not None
    asked = msgspec.structs.replace(found[2], tool_name="ask_user_question", input={"prompt": "?"})
    assert without_key(events, asked) == events
