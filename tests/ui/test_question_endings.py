"""Every way an open question ends, through the classroom's reducer: the dock closes (or
lets the learner answer again) and the composer comes back; it never stays "Checking…".

The frames are in the order the server sends them: the asking turn ends `awaiting_answer`
(possibly after the learner already answered), the answer's own turn starts, records the
answer (a verdict for a quiz, then the tool result) and finishes."""

from __future__ import annotations

import pytest

from shared_contracts.chat import Message, PendingQuestion, TextPart, ToolPart
from shared_contracts.frames import (
    ErrorFrame,
    Question,
    ServerFrame,
    Snapshot,
    TextDelta,
    ToolCall,
    TurnFinished,
    TurnStarted,
    VerdictFrame,
)
from shared_contracts.frames import ToolResult as ToolResultFrame
from shared_contracts.questions import PublicChoice, PublicQuestion, Verdict
from shared_contracts.tools import GradedOutput, ReplyOutput
from tests.ui.samples import AT, MC, chat_view
from ui.model.render import project
from ui.model.room import Room, answer_sent, apply_frames

ASK = PublicQuestion(
    kind="ask_user",
    prompt="How **sure** are you about $\\frac{1}{2}$?",
    options=[PublicChoice(id="s1", text="*Very* sure"), PublicChoice(id="s2", text="`not` sure")],
)
ASK_ID, QUIZ_ID = "call_ask", "call_mc"


def _asked(question: PublicQuestion, call: str) -> Room:
    """A room whose tutor asked `question` in turn 1 (the turn has not finished yet)."""
    tool_name = "ask_user_question" if question.kind == "ask_user" else "quiz"
    part = ToolPart(tool_call_id=call, tool_name=tool_name, state="input-available", input={})
    frames: list[ServerFrame] = [
        Snapshot(chat=chat_view(messages=[], pending_question=None)),
        TurnStarted(turn_id=1),
        TextDelta(message_id="a1", delta="Tell me."),
        ToolCall(message_id="a1", part=part),
        Question(tool_call_id=call, question=question),
    ]
    return apply_frames(Room(), frames)


def _answered(question: PublicQuestion = ASK, call: str = ASK_ID) -> Room:
    """The learner answered before the asking turn's end reached the page."""
    room = answer_sent(_asked(question, call), call)
    room = apply_frames(room, [TurnFinished(turn_id=1, reason="awaiting_answer")])
    assert project(room).dock.checking  # still waiting for the answer's own turn
    return apply_frames(room, [TurnStarted(turn_id=2)])


def _reply(call: str = ASK_ID, state: str = "output-available", **fields) -> ToolResultFrame:
    part = ToolPart(
        tool_call_id=call, tool_name="ask_user_question", state=state, input={}, **fields
    )
    return ToolResultFrame(part=part)


def _closed(room: Room) -> bool:
    view = project(room)
    return room.pending is None and not view.dock.visible and not view.dock.checking


def _answerable_again(room: Room) -> bool:
    view = project(room)
    return view.dock.visible and not view.dock.checking


def test_a_free_form_answer_recorded_closes_the_dock_when_the_turn_stops():
    """The tutor acknowledges the reply and stops (no new question): the dock used to stay
    "Checking…" with the composer disabled, since nothing but a verdict closed it."""
    room = apply_frames(
        _answered(),
        [
            _reply(output=ReplyOutput(answer="Very sure")),
            TextDelta(message_id="a2", delta="Good, **thanks**."),
            TurnFinished(turn_id=2, reason="stop"),
        ],
    )
    assert _closed(room) and not room.turn_running


def test_the_tool_result_alone_closes_the_dock_before_the_turn_ends():
    room = apply_frames(_answered(), [_reply(output=ReplyOutput(answer="Very sure"))])
    assert _closed(room)


def test_a_graded_quiz_closes_the_dock_with_its_verdict():
    room = apply_frames(
        _answered(MC, QUIZ_ID),
        [VerdictFrame(tool_call_id=QUIZ_ID, correct=True, expected="1/2", feedback="Yes.")],
    )
    assert _closed(room) and project(room).verdict.visible
    graded = GradedOutput(answer="a", verdict=Verdict(correct=True, expected="1/2"))
    part = ToolPart(
        tool_call_id=QUIZ_ID, tool_name="quiz", state="output-available", input={}, output=graded
    )
    room = apply_frames(room, [ToolResultFrame(part=part), TurnFinished(turn_id=2, reason="stop")])
    assert _closed(room) and project(room).verdict.visible


def test_a_refused_question_closes_the_dock():
    room = apply_frames(_answered(), [_reply(state="output-error", error="could not record")])
    assert _closed(room)


def test_a_new_question_replaces_the_answered_one():
    room = apply_frames(_answered(), [_reply(output=ReplyOutput(answer="Very sure"))])
    room = apply_frames(room, [Question(tool_call_id=QUIZ_ID, question=MC)])
    assert _answerable_again(room) and room.pending is not None
    assert room.pending.tool_call_id == QUIZ_ID


@pytest.mark.parametrize("reason", ["stop", "aborted", "error"])
def test_a_turn_ending_without_recording_the_answer_lets_the_learner_answer_again(reason):
    """The answer's turn ends (stopped, aborted, failed) with no result for the question:
    it is still open on the server, so the dock takes an answer again."""
    room = apply_frames(_answered(), [TurnFinished(turn_id=2, reason=reason)])
    assert _answerable_again(room) and not room.turn_running


def test_a_turn_error_frame_lets_the_learner_answer_again():
    room = apply_frames(
        _answered(),
        [
            ErrorFrame(code="storage_error", message="disk full"),
            TurnFinished(turn_id=2, reason="error"),
        ],
    )
    assert _answerable_again(room) and project(room).status.error == "disk full"


def test_the_server_saying_there_is_no_such_question_closes_the_dock():
    room = apply_frames(_answered(), [ErrorFrame(code="no_pending_question", message="gone")])
    assert _closed(room)


def test_a_busy_answer_is_refused_and_the_dock_takes_it_again():
    room = answer_sent(_asked(ASK, ASK_ID), ASK_ID)
    room = apply_frames(room, [ErrorFrame(code="busy", message="A turn is running.")])
    assert _answerable_again(room)


def test_a_reconnect_snapshot_restores_the_question_or_closes_it():
    answered = _answered()
    still_open = PendingQuestion(tool_call_id=ASK_ID, tool_name="ask_user_question", question=ASK)
    reopened = apply_frames(answered, [Snapshot(chat=chat_view(pending_question=still_open))])
    assert _answerable_again(reopened)
    message = Message(id="u2", role="user", turn=2, created_at=AT, parts=[TextPart(text="x")])
    recorded = apply_frames(
        answered, [Snapshot(chat=chat_view(pending_question=None, messages=[message]))]
    )
    assert _closed(recorded)


def test_a_result_for_another_call_leaves_the_open_question_alone():
    room = apply_frames(_answered(), [_reply(call="call_other", output=ReplyOutput(answer="x"))])
    assert project(room).dock.checking and room.pending is not None


def test_the_asking_turn_ending_keeps_an_answer_that_is_on_its_way():
    room = answer_sent(_asked(ASK, ASK_ID), ASK_ID)
    room = apply_frames(room, [TurnFinished(turn_id=1, reason="awaiting_answer")])
    assert project(room).dock.checking
