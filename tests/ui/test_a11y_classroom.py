"""The classroom for the keyboard and a screen reader, without a browser: where focus goes
after each action, names for what has no text, and live regions that are there in time."""

from __future__ import annotations

import re

import reflex as rx

from shared_contracts.chat import ToolPart
from shared_contracts.frames import ErrorFrame, JobFrame, Question, ToolCall, TurnStarted
from shared_contracts.questions import PublicChoice, PublicQuestion
from tests.ui.samples import MC, demo_job
from tests.ui.state_doubles import part, substate
from ui.components import question_dock, room_header
from ui.components.chat_items import chat_item
from ui.components.plan_panel import plan_panel
from ui.model.conversation import chat_items
from ui.model.render import dock
from ui.model.room import Room, apply_frames
from ui.pages import classroom
from ui.state.room_state import DockState, PlanState, RoomState, StatusState, TurnState


def focus_target(spec: rx.event.EventSpec | None) -> str:
    """The ref an `rx.set_focus` event focuses (compare with `ref("element-id")`)."""
    assert spec is not None and spec.handler.fn.__qualname__ == "_set_focus"
    (_, target), *_ = spec.args
    return str(target)


def ref(element_id: str) -> str:
    return focus_target(rx.set_focus(element_id))


def test_a_suggestion_chip_fills_the_answer_and_hands_focus_to_it():
    state = substate(RoomState)
    assert focus_target(state.use_suggestion("A bit unsure")) == ref("answer-input")
    assert part(state, DockState).answer_text == "A bit unsure"


def test_stop_and_dismiss_send_focus_where_the_learner_acts_next():
    state = substate(RoomState)
    state._publish(apply_frames(Room(), [TurnStarted(turn_id=1)]))
    assert focus_target(state.stop_turn()) == ref("composer")  # Stop gives way to Send
    state._publish(apply_frames(state._room, [ErrorFrame(code="x", message="boom")]))
    assert focus_target(state.dismiss_error()) == ref("composer")
    state._publish(apply_frames(Room(), [Question(tool_call_id="call_mc", question=MC)]))
    assert focus_target(state.dismiss_error()) == ref("answer-choices")


def test_enter_on_an_option_card_submits_and_other_keys_do_not():
    state = substate(RoomState)
    state._publish(apply_frames(Room(), [Question(tool_call_id="call_mc", question=MC)]))
    state.choices_key("ArrowDown")
    assert part(state, DockState).dock_hint == ""
    state.choices_key("Enter")  # nothing picked yet: the dock says so instead
    assert part(state, DockState).dock_hint == "Pick one of the options."


def test_option_cards_are_named_in_words_not_left_to_katex():
    options = [PublicChoice(id="a", text="$\\frac{3}{4}$"), PublicChoice(id="b", text="half")]
    question = PublicQuestion(kind="multiple_choice", prompt="1/4 + 1/2?", options=options)
    room = apply_frames(Room(), [Question(tool_call_id="call_mc", question=question)])
    assert [o.label for o in dock(room).options] == ["3/4", "half"]


def test_the_verdict_status_region_is_there_before_the_first_verdict():
    rendered = str(question_dock.verdict_card())
    assert rendered.index('role:"status"') < rendered.index('["visible"]')


def test_the_conversation_is_a_log_that_is_busy_while_the_tutor_writes():
    rendered = str(classroom.classroom())
    conversation = rendered[rendered.index('id:"conversation"') - 400 :]
    assert 'role:"log"' in conversation[:600]
    assert '"aria-busy":' + str(StatusState.status.turn_running) in conversation[:600]


def test_icon_only_buttons_and_the_dock_controls_are_named():
    header = str(room_header.header())
    assert '"aria-label":"Plan"' in header and '"aria-expanded":' in header
    assert '"aria-label":"Switch light or dark theme"' in header
    controls = str(question_dock.answer_control()) + str(question_dock.confidence_control())
    assert controls.count('"aria-labelledby":"question-prompt"') == 4  # 3 fields + the cards
    assert '"aria-labelledby":"confidence-label"' in controls
    assert '"aria-label":"Suggested answers"' in controls


def test_plan_states_are_read_as_words_and_the_current_step_is_marked():
    rendered = str(plan_panel(rx.Var.create("goal"), PlanState.plan))
    for word in ('"aria-label":"done"', '"aria-label":"now"', '"aria-label":"to do"'):
        assert word in rendered
    assert 'role:"list"' in rendered and '"aria-current":' in rendered


def test_a_demo_page_shows_keyboard_focus_inside_its_frame():
    part = ToolPart(
        tool_call_id="call_d1", tool_name="demo", state="input-available", input={}, job_id="job-1"
    )
    room = apply_frames(Room(), [ToolCall(message_id="m1", part=part), JobFrame(job=demo_job())])
    (item,) = chat_items(room)
    assert ":focus-visible{outline:3px solid" in item.demo_doc.split("<p>demo</p>")[0]


def test_messages_and_questions_render_as_memo_components_of_plain_props():
    """A turn joining the log resends the whole list: without a memo per block, each of
    300 messages was parsed and typeset again (1.5-1.9 s before the learner's own message
    appeared; 0.45 s with it)."""
    rendered = str(rx.foreach(TurnState.turn_items, chat_item))
    assert re.search(r"jsx\(TextBlock_\w+,\{role:[^,]+,text:", rendered)
    assert re.search(r"jsx\(QuestionBlock_\w+,\{", rendered)
