"""Frame → room reducers: every ServerFrame variant is handled, and each does its job."""

from __future__ import annotations

from typing import get_args

from shared_contracts.chat import UNTITLED
from shared_contracts.frames import (
    ErrorFrame,
    GraphUpdated,
    Question,
    ServerFrame,
    Snapshot,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnFinished,
    TurnStarted,
    VerdictFrame,
)
from shared_contracts.questions import PublicQuestion
from tests.ui.samples import GRADED, MC, ONE_OF_EACH, chat_view, quiz_part
from ui.model.room import (
    HANDLERS,
    Room,
    answer_sent,
    apply_frame,
    apply_frames,
    extraction_started,
    graph_notice,
    missing_job_results,
    user_sent,
)


def test_every_server_frame_variant_has_a_handler():
    members = get_args(ServerFrame)
    assert len(members) >= 13
    missing = [m.__name__ for m in members if m not in HANDLERS]
    assert missing == []


def test_samples_cover_every_variant_and_all_apply():
    assert {type(f) for f in ONE_OF_EACH} == set(get_args(ServerFrame))
    room = apply_frames(Room(), ONE_OF_EACH)
    assert room.loaded and room.offline and room.title == "Fractions"


def test_snapshot_restores_messages_plan_and_pending_question():
    room = apply_frame(Room(errors=("old",)), Snapshot(chat=chat_view()))
    assert [m.id for m in room.messages] == ["m1", "m2"]
    assert room.plan is not None and room.plan.current == "compare"
    assert room.pending is not None and room.pending.question.prompt == "Which is bigger?"
    assert room.errors == ()


def test_text_deltas_accumulate_into_one_part_of_a_new_message():
    room = apply_frames(
        Room(), [TextDelta(message_id="m9", delta="Hel"), TextDelta(message_id="m9", delta="lo")]
    )
    assert len(room.messages) == 1
    assert room.messages[0].role == "assistant"
    assert room.messages[0].parts[0].text == "Hello"


def test_tool_call_then_result_replaces_the_part_in_place():
    room = apply_frames(
        Room(),
        [
            TextDelta(message_id="m3", delta="Quiz time"),
            ToolCall(message_id="m3", part=quiz_part()),
            TextDelta(message_id="m3", delta="after"),
            ToolResult(part=quiz_part("output-available", GRADED)),
        ],
    )
    parts = room.messages[0].parts
    assert [type(p).__name__ for p in parts] == ["TextPart", "ToolPart", "TextPart"]
    assert parts[1].output == GRADED


def test_question_then_verdict_clears_the_pending_question():
    room = apply_frame(Room(), Question(tool_call_id="call_mc", question=MC))
    assert room.pending is not None and room.pending.tool_name == "quiz"
    room = answer_sent(room, "call_mc")
    assert room.submitted == "call_mc"
    verdict = VerdictFrame(tool_call_id="call_mc", correct=False, expected="1/2")
    room = apply_frame(room, verdict)
    assert room.pending is None and room.submitted == ""
    assert room.last_verdict == verdict


def test_a_new_learner_message_takes_the_last_verdict_out_of_the_dock():
    room = answer_sent(
        apply_frame(Room(), Question(tool_call_id="call_mc", question=MC)), "call_mc"
    )
    room = apply_frame(room, VerdictFrame(tool_call_id="call_mc", correct=True, expected="1/2"))
    room = apply_frame(room, TurnFinished(turn_id=2, reason="stop"))
    assert room.last_verdict is not None  # the lesson going on by itself keeps it
    room = user_sent(room, "now something else", "local-2")
    assert room.last_verdict is None


def test_a_later_turn_of_the_tutor_takes_the_last_verdict_out_of_the_dock():
    room = answer_sent(
        apply_frame(Room(), Question(tool_call_id="call_mc", question=MC)), "call_mc"
    )
    room = apply_frame(room, TurnStarted(turn_id=2))  # the answer's own turn
    room = apply_frame(room, VerdictFrame(tool_call_id="call_mc", correct=True, expected="1/2"))
    room = apply_frame(room, TurnFinished(turn_id=2, reason="stop"))
    assert room.last_verdict is not None
    room = apply_frame(room, TurnStarted(turn_id=3))  # e.g. job results handed on
    assert room.last_verdict is None


def test_ask_user_question_is_marked_as_such():
    ask = PublicQuestion(kind="ask_user", prompt="What do you want to learn?")
    room = apply_frame(Room(), Question(tool_call_id="call_a", question=ask))
    assert room.pending.tool_name == "ask_user_question"


def test_turn_lifecycle_and_error_frames():
    room = apply_frame(Room(), TurnStarted(turn_id=1))
    assert room.turn_running
    room = apply_frame(answer_sent(room, "x"), ErrorFrame(code="busy", message="busy now"))
    assert room.errors == ("busy now",) and room.submitted == ""
    room = apply_frame(room, TurnFinished(turn_id=1, reason="error"))
    assert not room.turn_running
    for n in range(5):
        room = apply_frame(room, ErrorFrame(code="internal", message=f"e{n}"))
    assert room.errors == ("e2", "e3", "e4")


def test_no_pending_question_error_drops_the_stale_dock():
    room = apply_frame(Room(), Question(tool_call_id="call_mc", question=MC))
    room = apply_frame(room, ErrorFrame(code="no_pending_question", message="gone"))
    assert room.pending is None


def test_graph_updated_ends_extraction_with_a_count():
    room = extraction_started(Room())
    assert room.extracting
    room = apply_frame(room, GraphUpdated(stats=ONE_OF_EACH[10].stats, new_nodes=["a", "b"]))
    assert not room.extracting and room.graph_notice == "2 new things in your graph"
    assert graph_notice(1) == "1 new thing in your graph"


def test_the_first_message_names_an_untitled_chat_at_once():
    room = apply_frame(Room(), Snapshot(chat=chat_view(title=UNTITLED)))
    room = user_sent(room, "  Teach me\nfractions  ", "local-1")
    assert room.title == "Teach me fractions"
    assert user_sent(room, "something else", "local-2").title == "Teach me fractions"
    long = user_sent(apply_frame(Room(), Snapshot(chat=chat_view(title=UNTITLED))), "x" * 80, "l")
    assert long.title == "x" * 60 + "…"


def test_user_message_shows_at_once():
    room = user_sent(Room(), "teach me fractions", "local-1")
    assert room.messages[-1].role == "user"
    assert room.messages[-1].parts[0].text == "teach me fractions"


def test_finished_job_without_result_is_fetched_once_known():
    from shared_contracts.chat import ToolPart
    from shared_contracts.tools import JobOutput

    part = ToolPart(
        tool_call_id="call_d1",
        tool_name="demo",
        state="output-available",
        job_id="job-1",
        output=JobOutput(job_id="job-1", status="done"),
    )
    room = apply_frame(Room(), ToolCall(message_id="m1", part=part))
    assert missing_job_results(room) == ["job-1"]
