"""Each verdict is seen once: the latest in the card under the conversation (by the dock
the learner answered in), earlier ones in their question's block in the conversation."""

from __future__ import annotations

from shared_contracts.chat import Message, TextPart, ToolPart
from shared_contracts.frames import (
    Question,
    Snapshot,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnFinished,
    TurnStarted,
    VerdictFrame,
)
from shared_contracts.questions import Verdict
from shared_contracts.tools import GradedOutput
from tests.ui.samples import AT, MC, chat_view
from tests.ui.state_doubles import part, substate
from ui.model.render import RoomView, in_card, project
from ui.model.room import Room, answer_sent, apply_frames
from ui.state.room_state import ChatLogState, DockState, RoomState, TurnState, VerdictState


def _quiz(call_id: str, graded: GradedOutput | None = None) -> ToolPart:
    return ToolPart(
        tool_call_id=call_id,
        tool_name="quiz",
        state="output-available" if graded else "input-available",
        input={"question": {"kind": "multiple_choice", "prompt": f"Question {call_id}"}},
        output=graded,
    )


def _graded(correct: bool) -> GradedOutput:
    expected, feedback = ("1/2", "Halves.") if correct else ("1/3", "Thirds.")
    return GradedOutput(
        answer="a", verdict=Verdict(correct=correct, expected=expected, feedback=feedback)
    )


def _ask(turn: int, message_id: str, call_id: str, *, goes_on: bool = False) -> list:
    """The tutor asks `call_id`: in a turn of its own, or going on in the answer's turn
    (`goes_on`, after the last verdict, as the offline tutor does)."""
    return [
        *([] if goes_on else [TurnStarted(turn_id=turn)]),
        ToolCall(message_id=message_id, part=_quiz(call_id)),
        Question(tool_call_id=call_id, question=MC),
        TurnFinished(turn_id=turn, reason="awaiting_answer"),
    ]


def _grade(turn: int, call_id: str, correct: bool, next_message: str) -> list:
    graded = _graded(correct)
    return [
        TurnStarted(turn_id=turn),
        VerdictFrame(
            tool_call_id=call_id,
            correct=correct,
            expected=graded.verdict.expected,
            feedback=graded.verdict.feedback,
        ),
        ToolResult(part=_quiz(call_id, graded)),
        TextDelta(message_id=next_message, delta="On we go."),
    ]


def seen(view: RoomView) -> list[tuple[str, str, bool]]:
    """Every verdict the page shows, in page order: (where, question key, correct)."""
    shown = [
        ("conversation", item.key, item.correct)
        for item in [*view.items, *view.turn_items]
        if item.graded and not in_card(item.key, view.verdict)
    ]
    if view.verdict.visible:
        shown.append(("card", view.verdict.question, view.verdict.correct))
    return shown


START = Snapshot(chat=chat_view(pending_question=None, messages=[]))


def _first_graded() -> Room:
    room = apply_frames(Room(), [START, *_ask(1, "m2", "call_a")])
    room = answer_sent(room, "call_a")
    return apply_frames(room, _grade(2, "call_a", False, "m3"))


def test_the_latest_verdict_is_shown_once_in_the_card():
    view = project(_first_graded())
    assert seen(view) == [("card", "m2:0", False)]
    (block,) = [item for item in view.turn_items if item.kind == "quiz"]
    assert block.graded and block.expected == "1/3"  # still there, for the log's reader


def test_grading_a_second_question_moves_the_first_verdict_into_the_conversation():
    room = apply_frames(_first_graded(), _ask(2, "m4", "call_b", goes_on=True))
    assert seen(project(room)) == [("card", "m2:0", False)]  # until the learner answers
    room = answer_sent(room, "call_b")
    assert seen(project(room)) == [("conversation", "m2:0", False)]
    room = apply_frames(room, _grade(3, "call_b", True, "m5"))
    assert seen(project(room)) == [("conversation", "m2:0", False), ("card", "m4:0", True)]


def _history() -> list[Message]:
    def said(message_id: str, *parts) -> Message:
        return Message(id=message_id, role="assistant", turn=1, created_at=AT, parts=list(parts))

    hello = Message(id="m1", role="user", turn=1, created_at=AT, parts=[TextPart(text="hi")])
    return [
        hello,
        said("m2", _quiz("call_a", _graded(False))),
        said("m4", _quiz("call_b", _graded(True)), TextPart(text="Well done.")),
    ]


def test_a_reload_shows_every_graded_question_with_its_verdict_in_the_conversation():
    reloaded = Snapshot(chat=chat_view(pending_question=None, messages=_history()))
    view = project(apply_frames(Room(chat_id="chat-1"), [reloaded]))
    assert seen(view) == [("conversation", "m2:0", False), ("conversation", "m4:0", True)]


def test_a_reconnect_keeps_the_latest_verdict_in_the_card_only():
    room = apply_frames(_first_graded(), [TurnFinished(turn_id=2, reason="stop")])
    again = Snapshot(chat=chat_view(pending_question=None, messages=[*_history()[:2]]))
    assert seen(project(apply_frames(room, [again]))) == [("card", "m2:0", False)]


def test_a_verdict_coming_or_going_resends_no_conversation_list():
    """The block compares its key with the card's in the browser: answering the next
    question (the first verdict becomes history) sends the dock and the card only."""
    state = substate(RoomState)
    state._publish(apply_frames(_first_graded(), _ask(2, "m4", "call_b", goes_on=True)))
    state._clean()
    state._publish(answer_sent(state._room, "call_b"))
    assert set(state.get_delta()) == {DockState.get_full_name(), VerdictState.get_full_name()}
    assert part(state, VerdictState).verdict == project(state._room).verdict
    state._clean()
    state._publish(apply_frames(state._room, _grade(3, "call_b", True, "m5")))
    delta = set(state.get_delta())
    assert ChatLogState.get_full_name() not in delta and TurnState.get_full_name() in delta
    assert part(state, VerdictState).verdict.question == "m4:0"
