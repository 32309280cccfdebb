"""RoomState/HomeState without a browser: handlers, outbox, and no secret in public vars."""

from __future__ import annotations

import asyncio
import json

import msgspec
from reflex.istate.data import ReflexURL, RouterData
from websockets.asyncio.server import serve

from shared_contracts.chat import Message, TextPart
from shared_contracts.frames import (
    Abort,
    Answer,
    ClientFrame,
    Question,
    Snapshot,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnFinished,
    TurnStarted,
    UserMessage,
    VerdictFrame,
)
from tests.ui.samples import AT, GRADED, MC, ONE_OF_EACH, QUIZ_KEY, chat_view, quiz_part
from tests.ui.state_doubles import FakeProxy, part, substate
from ui import outbox
from ui.model.room import Room, answer_sent, apply_frames
from ui.state.home_state import HomeState
from ui.state.room_state import (
    ChatLogState,
    DockState,
    LiveState,
    PlanState,
    RoomState,
    StatusState,
    TurnState,
    VerdictState,
    chat_id_from_path,
)

CLIENT = msgspec.json.Decoder(ClientFrame)
ENC = msgspec.json.Encoder()


def test_no_public_var_ever_holds_a_quiz_key():
    state = substate(RoomState)
    state._publish(apply_frames(Room(), ONE_OF_EACH))
    state._publish(apply_frames(state._room, [Snapshot(chat=chat_view())]))
    public = json.dumps(state.dict(), default=str)
    delta = json.dumps(state.get_delta(), default=str)
    assert part(state, TurnState).turn_items, "the projection produced items"
    assert QUIZ_KEY not in public and QUIZ_KEY not in delta
    fields = next(iter(state.dict().values()))
    assert "_room" not in RoomState.base_vars and not any("_room" in k for k in fields)


def test_a_streamed_token_sends_the_latest_turn_not_the_whole_conversation():
    """A 300-message chat resent the whole conversation (~250 KB) 20 times a second while
    the tutor wrote, and the browser redrew every message each time."""
    messages = [
        Message(
            id=f"m{i}",
            role=("user" if i % 2 else "assistant"),
            turn=i,
            created_at=AT,
            parts=[TextPart(text=f"message {i}")],
        )
        for i in range(1, 301)
    ]
    state = substate(RoomState)
    log, turn = part(state, ChatLogState), part(state, TurnState)
    view = chat_view(messages=messages, pending_question=None)
    state._publish(apply_frames(Room(), [Snapshot(chat=view)]))
    assert len(log.items) == 298 and [i.text for i in turn.turn_items] == [
        "message 299",
        "message 300",
    ]
    state._publish(apply_frames(state._room, [TextDelta(message_id="m300", delta=" more")]))
    assert [i.text for i in turn.turn_items] == ["message 299"]  # the streamed block moved
    state._clean()
    state._publish(apply_frames(state._room, [TextDelta(message_id="m300", delta=" more")]))
    delta = state.get_delta()
    assert set(delta) == {LiveState.get_full_name()}  # not even the learner's message
    assert delta[LiveState.get_full_name()]["live_rx_state_"].text == "message 300 more more"
    assert len(json.dumps(delta, default=str)) < 300

    state.room_id = "chat-1"
    box = outbox.key(state.router.session.client_token, "chat-1")
    queue = outbox.open_box(box)
    try:
        state.set_draft("next question")
        state.send_message()  # the finished turn joins the log once, when the next starts
    finally:
        outbox.close_box(box, queue)
    assert len(log.items) == 300 and [i.text for i in turn.turn_items] == ["next question"]


def test_a_token_and_a_verdict_send_and_redraw_only_the_parts_they_change():
    """The browser redraws everything that reads a state when any var of it changes: with
    the dock, the status line and the plan in the room's own state, each streamed token
    redrew them all (B12)."""
    state = substate(RoomState)
    opening = [Snapshot(chat=chat_view(pending_question=None)), TurnStarted(turn_id=2)]
    state._publish(apply_frames(Room(), [*opening, TextDelta(message_id="m3", delta="Let ")]))
    assert part(state, LiveState).live.text == "Let "
    state._clean()
    state._publish(apply_frames(state._room, [TextDelta(message_id="m3", delta="us")]))
    assert set(state.get_delta()) == {LiveState.get_full_name()}

    asked = [
        ToolCall(message_id="m3", part=quiz_part()),
        Question(tool_call_id="call_q1", question=MC),
        TurnFinished(turn_id=2, reason="awaiting_answer"),
    ]
    state._publish(answer_sent(apply_frames(state._room, asked), "call_q1"))
    state._clean()
    graded = [
        TurnStarted(turn_id=3),
        VerdictFrame(tool_call_id="call_q1", correct=False, expected="1/2", feedback="No."),
        ToolResult(part=quiz_part("output-available", GRADED)),
    ]
    state._publish(apply_frames(state._room, graded))
    parts = (TurnState, StatusState, DockState, VerdictState)
    assert set(state.get_delta()) == {cls.get_full_name() for cls in parts}
    assert part(state, VerdictState).verdict.visible and not part(state, DockState).dock.visible
    assert part(state, LiveState).live.text == ""  # the turn ends on the question's card


def test_no_public_var_is_named_like_a_secret():
    for cls in (RoomState, HomeState):
        for name in cls.base_vars:
            assert not any(
                word in name.lower() for word in ("token", "secret", "answer_key", "accepted")
            )


def test_chat_id_from_path_accepts_only_ids():
    assert chat_id_from_path("/chat/abc-1") == "abc-1"
    assert chat_id_from_path("/chat/abc-1/") == "abc-1"
    assert chat_id_from_path("/chat/") == ""
    assert chat_id_from_path("/elsewhere/abc") == ""
    assert chat_id_from_path("/chat/ABC") == ""


def test_send_message_posts_a_user_message_and_shows_it():
    state = substate(RoomState)
    state.room_id = "chat-1"
    queue = outbox.open_box(outbox.key(state.router.session.client_token, "chat-1"))
    try:
        state.set_draft("  teach me halves ")
        state.send_message()
        frame = CLIENT.decode(queue.get_nowait())
        assert isinstance(frame, UserMessage) and frame.text == "teach me halves"
        assert state.draft == "" and part(state, TurnState).turn_items[-1].text == "teach me halves"
    finally:
        outbox.close_box(outbox.key(state.router.session.client_token, "chat-1"), queue)


def test_stop_asks_the_server_to_abort_the_running_turn_only():
    state = substate(RoomState)
    state.room_id = "chat-1"
    box = outbox.key(state.router.session.client_token, "chat-1")
    queue = outbox.open_box(box)
    try:
        state.stop_turn()  # no turn running: nothing to stop
        assert queue.empty()
        state._publish(apply_frames(Room(), [TurnStarted(turn_id=1)]))
        state.stop_turn()
        assert isinstance(CLIENT.decode(queue.get_nowait()), Abort)
    finally:
        outbox.close_box(box, queue)


def test_send_without_a_socket_says_so():
    state = substate(RoomState)
    state.room_id = "nowhere"
    state.set_draft("hello")
    state.send_message()
    assert "Not connected" in part(state, StatusState).status.error and state.draft == "hello"


def test_submit_answer_sends_an_answer_frame_and_shows_checking():
    state = substate(RoomState)
    state.room_id = "chat-1"
    state._publish(apply_frames(Room(), [Question(tool_call_id="call_mc", question=MC)]))
    box = outbox.key(state.router.session.client_token, "chat-1")
    queue = outbox.open_box(box)
    dock = part(state, DockState)
    try:
        state.submit_answer()
        assert dock.dock_hint == "Pick one of the options." and queue.empty()
        state.pick_choice("a")
        state.set_confidence("90")
        state.submit_answer()
        frame = CLIENT.decode(queue.get_nowait())
        assert frame == Answer(tool_call_id="call_mc", answer="a", confidence=0.9)
        assert dock.dock.checking and dock.choice == ""
    finally:
        outbox.close_box(box, queue)


async def test_open_room_streams_a_real_socket_into_state(monkeypatch):
    """The background handler against a tiny real WebSocket server on 127.0.0.1:0."""
    received: list[str] = []
    headers: list[str | None] = []

    async def handler(ws):
        headers.append(ws.request.headers.get("Authorization"))
        await ws.send(ENC.encode(Snapshot(chat=chat_view())).decode())
        received.append(await ws.recv())
        await ws.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        monkeypatch.setenv("LH_API_URL", f"http://127.0.0.1:{port}")
        monkeypatch.setenv("LH_API_TOKEN", "sekrit")
        state = substate(RoomState)
        state.router = RouterData(url=ReflexURL("http://127.0.0.1:3000/chat/chat-1"))
        task = asyncio.create_task(RoomState.open_room.fn(FakeProxy(state)))
        dock, status = part(state, DockState).dock, part(state, StatusState)
        for _ in range(100):
            await asyncio.sleep(0.02)
            dock = part(state, DockState).dock
            if dock.visible:
                break
        assert (
            status.status.connection == "connected" and status.status.tutor_label == "Offline tutor"
        )
        assert dock.prompt == "Which is bigger?" and part(state, PlanState).plan_goal == "Fractions"
        state.set_draft("hello")
        state.send_message()
        for _ in range(100):
            await asyncio.sleep(0.02)
            if received:
                break
        assert json.loads(received[0])["type"] == "user_message"
        assert headers == ["Bearer sekrit"]
        assert "sekrit" not in json.dumps(state.dict(), default=str)
        state.leave()
        await asyncio.wait_for(task, 5)
