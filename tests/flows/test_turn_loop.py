"""Whole turns through the real turns with a scripted model (no server)."""

from __future__ import annotations

import logging

import anyio
import pytest

from backend.core.errors import Busy, ModelError, NoPendingQuestion
from backend.turn.inputs import DeliverTurn
from shared_contracts.chat import TextPart, ToolPart
from shared_contracts.frames import (
    ErrorFrame,
    Plan,
    Question,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnFinished,
    TurnStarted,
    VerdictFrame,
)
from shared_contracts.model_io import ModelDone, ModelMessage, TextChunk
from shared_contracts.tools import GradedOutput
from tests.fakes import ScriptedModel, text_reply, tool_reply
from tests.flows.harness import FlowHarness

PLAN = {
    "goal": "Fractions",
    "nodes": [
        {"id": "halves", "title": "Halves"},
        {"id": "thirds", "title": "Thirds", "parent": "halves"},
    ],
}
QUIZ = {
    "node_id": "halves",
    "question": {
        "kind": "multiple_choice",
        "prompt": "Which is bigger?",
        "options": [{"id": "a", "text": "1/2"}, {"id": "b", "text": "1/3"}],
        "correct": "a",
        "explanation": "Halves are bigger pieces than thirds.",
    },
}
NUMERIC_CANARY = 0.123456789


async def test_text_only_turn_streams_and_persists():
    h = FlowHarness(ScriptedModel([text_reply("Hello! What would you like to learn?")]))
    chat = await h.new_chat()
    assert await h.say(chat, "hi") == "stop"
    assert isinstance(h.frames[0], TurnStarted)
    assert "".join(f.delta for f in h.of_type(TextDelta)) == "Hello! What would you like to learn?"
    assert h.frames[-1] == TurnFinished(turn_id=1, reason="stop")
    record = await h.chats.get(chat)
    assert [m.role for m in record.messages] == ["user", "assistant"]
    assert record.messages[1].parts == [TextPart(text="Hello! What would you like to learn?")]
    assert record.title == "hi"


async def test_server_tool_executes_and_the_loop_continues():
    model = ScriptedModel(
        [tool_reply([("c1", "plan_init", PLAN)], text="Let's plan."), text_reply("Ready.")]
    )
    h = FlowHarness(model)
    chat = await h.new_chat()
    assert await h.say(chat, "fractions please") == "stop"
    plans = h.of_type(Plan)
    assert [n.id for n in plans[-1].tree.nodes] == ["halves", "thirds"]
    record = await h.chats.get(chat)
    assert record.plan is not None and record.plan.goal == "Fractions"
    # the second model call saw the tool result
    second = model.requests[1].messages
    assert second[-1].role == "tool" and '"kind":"plan"' in second[-1].content
    results = h.of_type(ToolResult)
    assert results[0].part.state == "output-available"


async def test_quiz_waits_for_the_answer_then_grades_and_continues():
    model = ScriptedModel(
        [
            tool_reply([("q1", "quiz", QUIZ)], text="A question:"),
            text_reply("Well done."),
        ]
    )
    h = FlowHarness(model)
    chat = await h.new_chat()
    assert await h.say(chat, "quiz me") == "awaiting_answer"
    question = h.of_type(Question)[0]
    assert question.question.kind == "multiple_choice"
    assert '"correct"' not in h.wire()
    assert "Halves are bigger" not in h.wire()  # the explanation is part of the key too
    view = await h.chat_service.view(chat)
    assert view.pending_question is not None and view.pending_question.tool_call_id == "q1"

    assert await h.answer(chat, "q1", "a", confidence=0.8) == "stop"
    verdict = h.of_type(VerdictFrame)[0]
    assert verdict.correct and "1/2" in verdict.expected
    record = await h.chats.get(chat)
    part = next(p for p in record.messages[1].parts if isinstance(p, ToolPart))
    assert isinstance(part.output, GradedOutput) and part.output.confidence == 0.8
    # the continuation's request carried the verdict as the tool output
    assert '"correct":true' in model.requests[1].messages[-1].content
    assert (await h.chat_service.view(chat)).pending_question is None


async def test_wrong_answer_is_graded_wrong():
    h = FlowHarness(ScriptedModel([tool_reply([("q1", "quiz", QUIZ)]), text_reply("Not quite.")]))
    chat = await h.new_chat()
    await h.say(chat, "quiz me")
    await h.answer(chat, "q1", "b")
    assert h.of_type(VerdictFrame)[0].correct is False


async def test_answer_without_pending_question_is_refused():
    h = FlowHarness(ScriptedModel([text_reply("hi")]))
    chat = await h.new_chat()
    await h.say(chat, "hello")
    with pytest.raises(NoPendingQuestion):
        await h.answer(chat, "nope", "a")


async def test_no_key_in_any_frame_before_the_answer():
    quiz = {
        "question": {
            "kind": "numeric",
            "prompt": "Type the canary",
            "answer": NUMERIC_CANARY,
            "explanation": "canary-explanation-xyz",
        }
    }
    short = {
        "question": {
            "kind": "short_answer",
            "prompt": "Say the word",
            "accepted": ["zebracanary"],
        }
    }
    for spec, secrets in (
        (quiz, ["0.123456789", "canary-explanation-xyz"]),
        (short, ["zebracanary"]),
    ):
        h = FlowHarness(ScriptedModel([tool_reply([("q9", "quiz", spec)])]))
        chat = await h.new_chat()
        await h.say(chat, "go")
        wire = h.wire() + (await h.chat_service.view(chat)).__repr__()
        for secret in secrets:
            assert secret not in wire


async def test_malformed_tool_arguments_are_returned_as_errors_and_never_executed():
    model = ScriptedModel(
        [
            tool_reply([("c1", "plan_init", '{"goal": "x", "nodes": [{"id": "../etc"}]}')]),
            tool_reply([("c2", "plan_init", "{not json")]),
            tool_reply([("c3", "no_such_tool", {})]),
            text_reply("ok"),
        ]
    )
    h = FlowHarness(model)
    chat = await h.new_chat()
    assert await h.say(chat, "go") == "stop"
    record = await h.chats.get(chat)
    assert record.plan is None
    errors = [f.part for f in h.of_type(ToolResult) if f.part.state == "output-error"]
    assert [p.tool_call_id for p in errors] == ["c1", "c2", "c3"]
    assert (
        "does not exist" in errors[2].error
        and "no such tool" in model.requests[3].messages[-1].content
    )
    # The teacher reads the decoder's detail; the learner a sentence.
    assert model.requests[1].messages[-1].content.startswith("error: invalid arguments")
    assert errors[0].error == "The tutor's plan was malformed and was skipped."
    stored = [p for p in record.messages[-1].parts if isinstance(p, ToolPart)]
    assert stored[0].error.startswith("invalid arguments for plan_init")


async def test_a_malformed_diagram_request_is_a_sentence_for_the_learner(caplog):
    """A model's visual call whose arguments break the schema: the card fails with a
    sentence; msgspec's text goes to the teacher, the log and the chat's record."""
    caplog.set_level(logging.INFO, logger="harness.turn")
    bad = {"brief": "a diagram", "node_id": "Not An Id!"}
    model = ScriptedModel([tool_reply([("v1", "visual", bad)]), text_reply("Moving on.")])
    h = FlowHarness(model)
    chat = await h.new_chat()
    assert await h.say(chat, "draw it") == "stop"
    (failed,) = [f.part for f in h.of_type(ToolResult) if f.part.state == "output-error"]
    assert failed.error == "The tutor's diagram request was malformed and was skipped."
    assert "Expected `str` matching regex" not in h.wire()
    view = await h.chat_service.view(chat)
    shown = [p for m in view.messages for p in m.parts if isinstance(p, ToolPart)]
    assert [p.error for p in shown] == [failed.error]
    assert "invalid arguments for visual" in model.requests[1].messages[-1].content
    assert any("invalid arguments for visual" in r.getMessage() for r in caplog.records)


async def test_plan_errors_become_tool_errors():
    bad = {"node": {"id": "x", "title": "X", "parent": "missing"}}
    model = ScriptedModel(
        [tool_reply([("c1", "plan_init", PLAN), ("c2", "plan_add", bad)]), text_reply("ok")]
    )
    h = FlowHarness(model)
    chat = await h.new_chat()
    await h.say(chat, "go")
    record = await h.chats.get(chat)
    assert [n.id for n in record.plan.nodes] == ["halves", "thirds"]
    assert model.requests[1].messages[-1].content.startswith("error:")


async def test_step_limit_ends_a_runaway_loop():
    looping = [tool_reply([(f"c{i}", "plan_update", {"id": "halves"})]) for i in range(10)]
    h = FlowHarness(ScriptedModel([tool_reply([("c0", "plan_init", PLAN)]), *looping]), max_steps=3)
    chat = await h.new_chat()
    assert await h.say(chat, "go") == "error"
    assert h.of_type(ErrorFrame)[0].code == "step_limit"
    assert h.frames[-1].reason == "error"


async def test_busy_while_a_turn_runs():
    h = FlowHarness(ScriptedModel([text_reply("x")]))
    chat = await h.new_chat()
    scope = h.turns.claim(chat)
    with pytest.raises(Busy):
        h.turns.claim(chat)
    h.turns.release(chat, scope)
    h.turns.claim(chat)


async def test_abort_mid_stream_keeps_the_partial_text():
    started = anyio.Event()

    async def slow(request):
        yield TextChunk(text="Partial thought")
        started.set()
        await anyio.sleep(30)

    class SlowModel:
        name = "slow"

        def stream(self, request):
            return slow(request)

    h = FlowHarness(SlowModel())
    chat = await h.new_chat()
    reasons = []
    async with anyio.create_task_group() as tg:

        async def run():
            reasons.append(await h.say(chat, "go"))

        tg.start_soon(run)
        await started.wait()
        assert h.turns.abort(chat)
    assert reasons == ["aborted"]
    assert h.frames[-1].reason == "aborted"
    record = await h.chats.get(chat)
    assert record.messages[-1].parts == [TextPart(text="Partial thought")]
    assert not h.turns.is_running(chat)


async def test_provider_fault_keeps_partial_text_and_the_next_turn_works():
    model = ScriptedModel(
        [
            [TextChunk(text="Half an ans"), ModelError("upstream 503", retryable=True)],
            text_reply("Recovered."),
        ]
    )
    h = FlowHarness(model)
    chat = await h.new_chat()
    assert await h.say(chat, "go") == "error"
    assert h.of_type(ErrorFrame)[0].code == "model_error"
    record = await h.chats.get(chat)
    assert record.messages[-1].parts == [TextPart(text="Half an ans")]
    assert await h.say(chat, "again") == "stop"


async def test_one_question_at_a_time():
    second = {"prompt": "And you?"}
    model = ScriptedModel([tool_reply([("q1", "quiz", QUIZ), ("q2", "ask_user_question", second)])])
    h = FlowHarness(model)
    chat = await h.new_chat()
    assert await h.say(chat, "go") == "awaiting_answer"
    assert len(h.of_type(Question)) == 1
    failed = [f.part for f in h.of_type(ToolResult) if f.part.state == "output-error"]
    assert [p.tool_call_id for p in failed] == ["q2"]
    assert len(h.of_type(ToolCall)) == 2


async def test_ask_user_reply_continues_the_turn():
    model = ScriptedModel(
        [tool_reply([("a1", "ask_user_question", {"prompt": "Why?"})]), text_reply("Thanks")]
    )
    h = FlowHarness(model)
    chat = await h.new_chat()
    assert await h.say(chat, "go") == "awaiting_answer"
    assert await h.answer(chat, "a1", "because") == "stop"
    assert '"answer":"because"' in model.requests[1].messages[-1].content


async def test_graph_context_is_rendered_once_per_session_and_a_failed_read_retried():
    from backend.turn.seams import TurnSeams

    calls = []

    async def context(request) -> str:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("ledger unreadable")
        return "- `p1` verified: halves are bigger than thirds"

    model = ScriptedModel([text_reply("one"), text_reply("two"), text_reply("three")])
    h = FlowHarness(model)
    h.seams = TurnSeams(h.chats, h.clock, graph_context=context)
    h.__post_init__()
    chat = await h.new_chat()
    for text in ("a", "b", "c"):
        assert await h.say(chat, text) == "stop"
    prompts = [r.messages[0].content for r in model.requests]
    assert "halves are bigger" not in prompts[0]  # the failed read: no block, lesson goes on
    assert "halves are bigger" in prompts[1] and prompts[1] == prompts[2]
    assert len(calls) == 2  # rendered once after the failure, then reused


def _ending(text: str, finish_reason: str) -> list:
    done = ModelDone(
        message=ModelMessage(role="assistant", content=text), finish_reason=finish_reason
    )
    return [*text_reply(text)[:-1], done]


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (_ending("The numerator is the top num", "length"), "cut off. Ask it to go on"),
        (_ending("Fractions are", "content_filter"), "content filter"),
        (_ending("", "stop"), "sent an empty reply. Send your message again"),
        (_ending("  \n", "stop"), "sent an empty reply"),
    ],
)
async def test_an_answer_that_ends_short_or_empty_is_told_in_a_sentence(reply, said):
    h = FlowHarness(ScriptedModel([reply, text_reply("Here you go.")]))
    chat = await h.new_chat()
    assert await h.say(chat, "go") == "error"
    [error] = h.of_type(ErrorFrame)
    assert error.code == "model_error" and said in error.message
    assert h.frames[-1].reason == "error"
    assert await h.say(chat, "again") == "stop"  # the next turn works


async def test_a_plan_only_turn_with_no_word_is_an_empty_reply_but_a_job_delivery_is_not():
    h = FlowHarness(
        ScriptedModel([tool_reply([("c1", "plan_init", PLAN)]), text_reply(""), text_reply("")])
    )
    chat = await h.new_chat()
    assert await h.say(chat, "go") == "error"
    assert "empty reply" in h.of_type(ErrorFrame)[0].message
    h.frames.clear()
    assert await h.turns.run(chat, DeliverTurn(), h.sink, h.turns.claim(chat)) == "stop"
    assert h.of_type(ErrorFrame) == []


async def test_a_complete_answer_raises_no_notice():
    h = FlowHarness(ScriptedModel([text_reply("All done.")]))
    chat = await h.new_chat()
    assert await h.say(chat, "go") == "stop"
    assert h.of_type(ErrorFrame) == []
