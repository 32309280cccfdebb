"""The chat WebSocket through Litestar's test client: bad frames, size, origin, token."""

from __future__ import annotations

import msgspec
import pytest
from litestar.exceptions import WebSocketDisconnect

from backend.core.errors import ModelError
from shared_contracts.frames import (
    ErrorFrame,
    Pong,
    Question,
    ServerFrame,
    Snapshot,
    TextDelta,
    TurnFinished,
    VerdictFrame,
)
from tests.fakes import ScriptedModel, text_reply, tool_reply

DECODE = msgspec.json.Decoder(ServerFrame)
QUIZ = {
    "node_id": "n1",
    "question": {
        "kind": "short_answer",
        "prompt": "Name the green pigment",
        "accepted": ["chlorophyll"],
    },
}


def receive(ws) -> ServerFrame:
    return DECODE.decode(ws.receive_text(timeout=5))


def until(ws, kind: type) -> list[ServerFrame]:
    seen = []
    while True:
        frame = receive(ws)
        seen.append(frame)
        if isinstance(frame, kind):
            return seen


def new_chat(client) -> str:
    response = client.post("/api/chats", json={"title": "t"})
    assert response.status_code == 201
    return response.json()["id"]


def one_turn(client, text: str = "teach me") -> tuple[str, list[ServerFrame]]:
    """A new chat, one learner message over its socket: (chat id, frames to turn_finished)."""
    chat = new_chat(client)
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        receive(ws)
        ws.send_text(msgspec.json.encode({"type": "user_message", "text": text}).decode())
        return chat, until(ws, TurnFinished)


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("not json", "malformed"),
        ('{"type": "nope"}', "nope"),
        ('{"type": "user_message", "text": 5}', "Expected `str`"),
        ('{"type": "ping", "extra": 1}', "unknown field"),
        ('{"type": "answer", "tool_call_id": "../x", "answer": "a"}', "tool_call_id"),
        ("[" * 5000, ""),
        ("", ""),
    ],
)
def test_every_bad_frame_gets_one_error_and_the_socket_stays_usable(client_factory, raw, fragment):
    client = client_factory(ScriptedModel([]))
    chat = new_chat(client)
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        assert isinstance(receive(ws), Snapshot)
        ws.send_text(raw)
        error = receive(ws)
        assert isinstance(error, ErrorFrame) and error.code == "bad_frame"
        assert fragment in error.message
        ws.send_text('{"type": "ping"}')
        assert receive(ws) == Pong()


def test_binary_frames_are_decoded_too(client_factory):
    client = client_factory(ScriptedModel([]))
    chat = new_chat(client)
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        receive(ws)
        ws.send_bytes(b'{"type": "ping"}')
        assert receive(ws) == Pong()


def test_oversize_frame_closes_with_1009(client_factory):
    client = client_factory(ScriptedModel([]))
    chat = new_chat(client)
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        receive(ws)
        ws.send_text('{"type":"user_message","text":"' + "x" * (64 * 1024) + '"}')
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text(timeout=5)
        assert closed.value.code == 1009


def test_a_full_quiz_round_trip_without_leaking_the_key(client_factory):
    model = ScriptedModel([tool_reply([("q1", "quiz", QUIZ)], text="Try:"), text_reply("Yes!")])
    client = client_factory(model)
    chat = new_chat(client)
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        receive(ws)
        ws.send_text('{"type": "user_message", "text": "teach me"}')
        frames = until(ws, TurnFinished)
        raw = msgspec.json.encode(frames).decode()
        assert "chlorophyll" not in raw
        assert frames[-1].reason == "awaiting_answer"
        assert any(isinstance(f, Question) for f in frames)
    # a reconnect gets the pending question back in the snapshot, still without the key
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        text = ws.receive_text(timeout=5)
        assert "chlorophyll" not in text
        snapshot = DECODE.decode(text)
        assert snapshot.chat.pending_question.tool_call_id == "q1"
        assert "chlorophyll" not in client.get(f"/api/chats/{chat}").text
        ws.send_text('{"type": "answer", "tool_call_id": "q1", "answer": "Chlorophyll"}')
        frames = until(ws, TurnFinished)
        verdict = next(f for f in frames if isinstance(f, VerdictFrame))
        assert verdict.correct and verdict.expected == "chlorophyll"


def test_busy_and_no_pending_question(client_factory):
    client = client_factory(ScriptedModel([text_reply("hello")]))
    chat = new_chat(client)
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        receive(ws)
        ws.send_text('{"type": "answer", "tool_call_id": "q1", "answer": "x"}')
        error = receive(ws)
        assert error.code == "no_pending_question"


def test_flood_is_rate_limited_and_the_socket_survives(client_factory):
    client = client_factory(ScriptedModel([]), ws_frames_per_second=1.0, ws_burst=5)
    chat = new_chat(client)
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        receive(ws)
        for _ in range(12):
            ws.send_text('{"type": "ping"}')
        frames = [receive(ws) for _ in range(12)]
        limited = [f for f in frames if isinstance(f, ErrorFrame) and f.code == "rate_limited"]
        assert len(limited) >= 6
        assert sum(isinstance(f, Pong) for f in frames) >= 5


def test_unknown_chat_and_bad_id_are_refused_at_the_handshake(client_factory):
    client = client_factory(ScriptedModel([]))
    for path in ("/api/chats/nochat/ws", "/api/chats/BAD..ID/ws"):
        with pytest.raises(WebSocketDisconnect), client.websocket_connect(path) as ws:
            ws.receive_text(timeout=5)


def test_wrong_origin_is_refused_and_allowed_origin_accepted(client_factory):
    client = client_factory(ScriptedModel([]))
    chat = new_chat(client)
    with (
        pytest.raises(WebSocketDisconnect) as refused,
        client.websocket_connect(
            f"/api/chats/{chat}/ws", headers={"origin": "http://evil.example"}
        ) as ws,
    ):
        ws.receive_text(timeout=5)
    assert refused.value.code == 4403
    with client.websocket_connect(
        f"/api/chats/{chat}/ws", headers={"origin": "http://127.0.0.1:3000"}
    ) as ws:
        assert isinstance(receive(ws), Snapshot)


def test_token_is_required_on_http_and_websocket_when_configured(client_factory):
    client = client_factory(ScriptedModel([]), api_token="s3cret")
    assert client.get("/api/chats").status_code == 401
    ok = client.get("/api/chats", headers={"authorization": "Bearer s3cret"})
    assert ok.status_code == 200
    chat = client.post("/api/chats", headers={"authorization": "Bearer s3cret"}).json()["id"]
    with (
        pytest.raises(WebSocketDisconnect) as refused,
        client.websocket_connect(f"/api/chats/{chat}/ws?token=wrong") as ws,
    ):
        ws.receive_text(timeout=5)
    assert refused.value.code == 4401
    with client.websocket_connect(f"/api/chats/{chat}/ws?token=s3cret") as ws:
        assert isinstance(receive(ws), Snapshot)


class SlowModel:
    """Streams one chunk, then waits long enough for a second frame to arrive."""

    name = "slow"

    async def stream(self, request):
        import anyio

        from shared_contracts.model_io import ModelDone, ModelMessage, TextChunk

        yield TextChunk(text="thinking")
        await anyio.sleep(0.5)
        yield ModelDone(message=ModelMessage(role="assistant", content="thinking"))


def test_a_second_message_during_a_turn_is_busy_and_abort_stops_it(client_factory):
    client = client_factory(SlowModel())
    chat = new_chat(client)
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        receive(ws)
        ws.send_text('{"type": "user_message", "text": "one"}')
        ws.send_text('{"type": "user_message", "text": "two"}')
        frames = until(ws, ErrorFrame)
        assert frames[-1].code == "busy"
        until(ws, TextDelta)
        ws.send_text('{"type": "abort"}')
        finished = until(ws, TurnFinished)[-1]
        assert finished.reason == "aborted"
    view = client.get(f"/api/chats/{chat}").json()
    texts = [p["text"] for m in view["messages"] for p in m["parts"] if p["type"] == "text"]
    assert texts == ["one", "thinking"]


def test_the_trace_withholds_the_open_questions_key(client_factory):
    model = ScriptedModel([tool_reply([("q1", "quiz", QUIZ)]), text_reply("Yes!")])
    client = client_factory(model)
    chat = new_chat(client)
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        receive(ws)
        ws.send_text('{"type": "user_message", "text": "teach me"}')
        until(ws, TurnFinished)
        withheld = client.get(f"/api/chats/{chat}/trace")
        assert withheld.status_code == 200 and "chlorophyll" not in withheld.text
        assert QUIZ["question"]["prompt"] in withheld.text  # the question as it was shown
        ws.send_text('{"type": "answer", "tool_call_id": "q1", "answer": "chlorophyll"}')
        until(ws, TurnFinished)
    trace = client.get(f"/api/chats/{chat}/trace")
    assert trace.status_code == 200 and "chlorophyll" in trace.text


class CutOffModel:
    """Streams text, then stops without the final message (a provider that hung up)."""

    async def stream(self, request):
        from shared_contracts.model_io import TextChunk

        yield TextChunk(text="half a sen")


def test_a_stream_without_its_final_message_ends_the_turn_with_a_model_error(client_factory):
    client = client_factory(CutOffModel())
    chat, frames = one_turn(client)
    errors = [f for f in frames if isinstance(f, ErrorFrame)]
    assert [e.code for e in errors] == ["model_error"] and "final message" in errors[0].message
    assert frames[-1].reason == "error"
    view = client.get(f"/api/chats/{chat}").json()
    said = [p["text"] for m in view["messages"] for p in m["parts"] if m["role"] == "assistant"]
    assert said == ["half a sen"]  # what the learner saw is kept


def test_a_failed_model_call_shows_the_learner_its_public_message_not_the_detail(
    client_factory,
):
    detail = "openai/x: InternalServerError: litellm.InternalServerError: OpenAIException"
    public = "The tutor's model (openai/x) could not be reached. Send your message again."
    client = client_factory(ScriptedModel([ModelError(detail, retryable=True, public=public)]))
    _, frames = one_turn(client)
    errors = [f for f in frames if isinstance(f, ErrorFrame)]
    assert [(e.code, e.message) for e in errors] == [("model_error", public)]
    assert frames[-1].reason == "error"
