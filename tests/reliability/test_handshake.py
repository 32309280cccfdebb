"""Item 5 (handshake part): a remote client meets the Origin allowlist and the token as a
raw ASGI connect with a non-loopback address; every refusal comes before `accept`."""

from __future__ import annotations

from collections import Counter
from functools import partial

import pytest
from litestar.testing import TestClient

from backend.server.app import create_app
from backend.server.settings import Settings
from tests.fakes import ScriptedModel
from tests.reliability.asgi_ws import handshake
from tests.reliability.figures import table

REMOTE = ("203.0.113.7", 51000)
LOOPBACK = ("127.0.0.1", 51000)
HOST = "127.0.0.1:8100"
GOOD_ORIGIN = "http://127.0.0.1:3000"
BAD_ORIGINS = [
    "http://evil.example",
    "null",
    "http://127.0.0.1:3000.evil.example",
    "http://127.0.0.1:3001",
    "https://127.0.0.1:3000",
    "http://localhost.evil.example:3000",
    "file://",
    "",
    "ws://127.0.0.1:8100",
    "http://127.0.0.1:8100@evil.example",
]
TOKEN = "s3cret-token"


def app_and_client(tmp_path, **settings):
    app = create_app(Settings(data_dir=tmp_path / "data", **settings), model=ScriptedModel([]))
    return app, TestClient(app=app)


def connect(tc: TestClient, app, path: str, who, headers: dict, query: str = ""):
    """A raw handshake from address `who`, run on the test client's event loop."""
    call = partial(handshake, app, path, client=who, headers=headers, query=query)
    return tc.blocking_portal.call(call)


@pytest.fixture
def open_app(tmp_path):
    app, client = app_and_client(tmp_path)
    with client:
        chat = client.post("/api/chats", json={}).json()["id"]
        yield app, client, f"/api/chats/{chat}/ws"


@pytest.fixture
def token_app(tmp_path):
    app, client = app_and_client(tmp_path, api_token=TOKEN)
    with client:
        auth = {"authorization": f"Bearer {TOKEN}"}
        chat = client.post("/api/chats", json={}, headers=auth).json()["id"]
        yield app, client, f"/api/chats/{chat}/ws"


def expect(result, code: int | None, seen: Counter, label: str) -> None:
    seen[f"{label} → {'accepted' if code is None else code}"] += 1
    if code is None:
        assert result.accepted and result.frames and '"snapshot"' in result.frames[0], label
    else:
        assert not result.accepted and not result.frames, f"{label}: an app frame was sent"
        assert result.code == code, f"{label}: closed {result.code}, expected {code}"


def test_origin_allowlist_for_remote_clients(open_app):
    app, client, path = open_app
    seen: Counter[str] = Counter()
    for origin in BAD_ORIGINS:
        headers = {"host": HOST, "origin": origin} if origin else {"host": HOST}
        label = "remote, no Origin" if not origin else "remote, bad Origin"
        expect(connect(client, app, path, REMOTE, headers), 4403, seen, label)
    for origin in (GOOD_ORIGIN, f"http://{HOST}"):
        headers = {"host": HOST, "origin": origin}
        expect(
            connect(client, app, path, REMOTE, headers),
            None,
            seen,
            "remote, allowed Origin",
        )
    expect(
        connect(client, app, path, LOOPBACK, {"host": HOST}),
        None,
        seen,
        "loopback, no Origin",
    )
    table("handshake: Origin (no token configured)", sorted(seen.items()))


def test_token_when_configured(token_app):
    app, client, path = token_app
    seen: Counter[str] = Counter()
    base = {"host": HOST}
    for who in (REMOTE, LOOPBACK):
        where = "remote" if who == REMOTE else "loopback"
        expect(connect(client, app, path, who, base), 4401, seen, f"{where}, no token")
        for bad in ("wrong", TOKEN[:-1], TOKEN + "x", "", TOKEN.upper()):
            q = connect(client, app, path, who, base, query=f"token={bad}")
            expect(q, 4401, seen, f"{where}, wrong ?token")
            h = connect(client, app, path, who, {**base, "authorization": f"Bearer {bad}"})
            expect(h, 4401, seen, f"{where}, wrong Bearer")
        good = connect(client, app, path, who, base, query=f"token={TOKEN}")
        expect(good, None, seen, f"{where}, right ?token, no Origin")
        bearer = {**base, "authorization": f"Bearer {TOKEN}"}
        expect(
            connect(client, app, path, who, bearer),
            None,
            seen,
            f"{where}, right Bearer",
        )
        evil = {**bearer, "origin": "http://evil.example"}
        expect(
            connect(client, app, path, who, evil),
            4403,
            seen,
            f"{where}, right token, bad Origin",
        )
    # HTTP: 401 with a JSON body without the token, 200 with it.
    for headers, status in (({}, 401), ({"authorization": "Bearer nope"}, 401),
                            ({"authorization": f"Bearer {TOKEN}"}, 200)):  # fmt: skip
        response = client.get("/api/chats", headers=headers)
        assert response.status_code == status
        seen[f"HTTP GET /api/chats {'with' if status == 200 else 'without'} token → {status}"] += 1
    table("handshake: token configured", sorted(seen.items()))
