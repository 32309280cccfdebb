"""Accounts across two API workers on one database (issue 22 items 1, 2, 4): a sign-in made
on one worker opens the other, signing out on one closes both, a learner's chat is theirs
on both (and another learner's 404 on both), and a turn run over one worker's socket is in
the learner's own rows."""

from __future__ import annotations

import asyncio
import json

import httpx
import psycopg
import pytest
import websockets

from tests.reliability.workers import chat_ws, load_chat, start_worker, until

PASSWORD = "correct horse"
LEARN = json.dumps({"type": "user_message", "text": "teach me fractions"})


@pytest.fixture
def workers(tmp_path, pg_cluster):
    url = pg_cluster.create_database()
    env = {"LH_AUTH": "accounts", "LH_TEST_CHUNK_S": "0.005"}
    a = start_worker(tmp_path / "data", url, **env)
    b = start_worker(tmp_path / "data", url, **env)
    try:
        yield a, b, url
    finally:
        a.kill()
        b.kill()


def _signed_in(sign_up_at: str, sign_in_at: str, username: str) -> dict[str, str]:
    body = {"username": username, "password": PASSWORD}
    assert httpx.post(f"{sign_up_at}/api/accounts", json=body).status_code == 201
    session = httpx.post(f"{sign_in_at}/api/session", json=body)
    assert session.status_code == 200, session.text
    return {"Authorization": f"Bearer {session.json()['token']}"}


def _learner_id(url: str, username: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT learner_id FROM accounts WHERE username = %s", (username,))
        return row.fetchone()[0]


def test_two_workers_share_sign_ins_and_keep_each_learners_data_apart(workers):
    a, b, url = workers
    ada = _signed_in(a.url, b.url, "ada")  # signed up on one worker, in on the other
    bob = _signed_in(b.url, a.url, "bob")
    chat = httpx.post(f"{a.url}/api/chats", json={"title": "ada's"}, headers=ada).json()["id"]
    for server in (a, b):
        assert httpx.get(f"{server.url}/api/chats/{chat}", headers=ada).status_code == 200
        assert httpx.get(f"{server.url}/api/chats/{chat}", headers=bob).status_code == 404
        assert httpx.get(f"{server.url}/api/chats", headers=bob).json() == []

    async def turn_over_b() -> None:
        async with websockets.connect(chat_ws(b, chat), additional_headers=ada) as socket:
            await until(socket, "snapshot")
            await socket.send(LEARN)
            await until(socket, "turn_finished", within=60)

    asyncio.run(turn_over_b())
    record = load_chat(url, chat, learner=_learner_id(url, "ada"))
    assert record is not None and record.turns == 1
    assert load_chat(url, chat, learner=_learner_id(url, "bob")) is None

    assert httpx.delete(f"{a.url}/api/session", headers=ada).status_code == 204
    for server in (a, b):
        refused = httpx.get(f"{server.url}/api/chats", headers=ada)
        assert refused.status_code == 401 and refused.json()["code"] == "not_signed_in"
