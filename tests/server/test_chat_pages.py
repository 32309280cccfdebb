"""A long chat is read a page at a time: `GET /api/chats/{id}?before=&limit=` and the
socket's `?limit=` snapshot; without them, the whole chat as before; the record on disk is
whole either way."""

from __future__ import annotations

import msgspec
import pytest
from litestar.exceptions import WebSocketDisconnect

from shared_contracts.chat import ChatRecord
from shared_contracts.frames import ServerFrame, Snapshot, TurnFinished
from tests.fakes import ScriptedModel, text_reply

DECODE = msgspec.json.Decoder(ServerFrame)
TURNS = 3


def _chat_of_three_turns(client) -> str:
    chat = client.post("/api/chats", json={"title": "t"}).json()["id"]
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        ws.receive_text(timeout=5)
        for index in range(TURNS):
            message = {"type": "user_message", "text": f"question {index}"}
            ws.send_text(msgspec.json.encode(message).decode())
            while not isinstance(DECODE.decode(ws.receive_text(timeout=5)), TurnFinished):
                pass
    return chat


@pytest.fixture
def paged(client_factory):
    client = client_factory(ScriptedModel([text_reply(f"answer {i}") for i in range(TURNS)]))
    return client, _chat_of_three_turns(client)


def _ids(view: dict) -> list[str]:
    return [m["id"] for m in view["messages"]]


def test_pages_of_a_chat_over_http(paged, tmp_path):
    client, chat = paged
    whole = client.get(f"/api/chats/{chat}").json()
    ids = _ids(whole)
    assert len(ids) == 2 * TURNS and whole["earlier"] == 0
    latest = client.get(f"/api/chats/{chat}", params={"limit": 2}).json()
    assert _ids(latest) == ids[-2:] and latest["earlier"] == 4
    assert latest["title"] == whole["title"] and latest["turns"] == whole["turns"]
    before = client.get(f"/api/chats/{chat}", params={"before": ids[-2], "limit": 3}).json()
    assert _ids(before) == ids[1:4] and before["earlier"] == 1
    first = client.get(f"/api/chats/{chat}", params={"before": ids[1], "limit": 3}).json()
    assert _ids(first) == ids[:1] and first["earlier"] == 0
    record = msgspec.json.decode(
        (tmp_path / "data" / "chats" / f"{chat}.json").read_bytes(), type=ChatRecord
    )
    assert [m.id for m in record.messages] == ids  # a page is a view; the record is whole


def test_a_bad_page_is_a_json_error(paged):
    client, chat = paged
    for params, status in [
        ({"before": "msg-nowhere"}, 404),
        ({"before": "NOT..AN..ID"}, 400),
        ({"limit": 0}, 400),
        ({"limit": 501}, 400),
        ({"limit": "many"}, 400),
    ]:
        response = client.get(f"/api/chats/{chat}", params=params)
        assert response.status_code == status, params
        assert response.json()["status_code"] == status


def test_the_socket_snapshot_holds_the_latest_page_when_asked(paged):
    client, chat = paged
    with client.websocket_connect(f"/api/chats/{chat}/ws?limit=2") as ws:
        snapshot = DECODE.decode(ws.receive_text(timeout=5))
    assert isinstance(snapshot, Snapshot)
    assert len(snapshot.chat.messages) == 2 and snapshot.chat.earlier == 2 * TURNS - 2
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        whole = DECODE.decode(ws.receive_text(timeout=5))
    assert isinstance(whole, Snapshot)
    assert len(whole.chat.messages) == 2 * TURNS and whole.chat.earlier == 0
    for bad in ("0", "x", "501"):
        with (
            pytest.raises(WebSocketDisconnect),
            client.websocket_connect(f"/api/chats/{chat}/ws?limit={bad}") as ws,
        ):
            ws.receive_text(timeout=5)
