"""`LH_AUTH=accounts`: sign-up, sign-in, sign-out, expiry, the rate limit, one answer for
an unknown user and a wrong password; `LH_AUTH=local` unchanged and never exposed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from litestar.testing import TestClient

from backend.accounts.passwords import fast_test_passwords
from backend.accounts.service import AccountService, token_digest
from backend.server.app import create_app
from backend.server.settings import Settings, SettingsError, check_exposure
from backend.server.stores import FileStoreFactory
from tests.fakes import FixedClock, ScriptedModel, SequentialIds
from tests.server.accounts_app import accounts_app, sign_up_and_in

PAIR = {"username": "ada", "password": "correct horse"}


@pytest.fixture
def client(tmp_path):
    app, _ = accounts_app(tmp_path / "data")
    with TestClient(app=app) as client:
        yield client


def test_sign_up_then_in_then_the_token_opens_the_api_and_signing_out_closes_it(client):
    assert client.get("/api/chats").status_code == 401
    assert client.get("/healthz").status_code == 200
    assert client.get("/schema/openapi.json").status_code == 200
    learner = sign_up_and_in(client, "Ada ")  # names are trimmed and lower-cased
    assert learner.username == "Ada "
    assert client.get("/api/chats", headers=learner.auth).json() == []
    chat = client.post("/api/chats", json={}, headers=learner.auth)
    assert chat.status_code == 201
    assert client.delete("/api/session", headers=learner.auth).status_code == 204
    after = client.get("/api/chats", headers=learner.auth)
    assert after.status_code == 401 and after.json()["code"] == "not_signed_in"


def test_sign_up_refuses_a_taken_name_a_bad_name_and_a_short_password(client):
    assert client.post("/api/accounts", json=PAIR).status_code == 201
    taken = client.post("/api/accounts", json={**PAIR, "username": "ADA"})
    assert taken.status_code == 409 and taken.json()["code"] == "account_taken"
    bad_name = client.post("/api/accounts", json={**PAIR, "username": "../etc"})
    assert bad_name.status_code == 400 and "username" in bad_name.json()["detail"]
    short = client.post("/api/accounts", json={"username": "bob", "password": "short"})
    assert short.status_code == 400 and "8 characters" in short.json()["detail"]
    extra = client.post("/api/accounts", json={**PAIR, "admin": True})
    assert extra.status_code == 400


def test_an_unknown_user_and_a_wrong_password_get_the_same_answer(client):
    client.post("/api/accounts", json=PAIR)
    wrong = client.post("/api/session", json={**PAIR, "password": "wrong horse"})
    unknown = client.post("/api/session", json={**PAIR, "username": "nobody"})
    invalid = client.post("/api/session", json={**PAIR, "username": "no body!"})
    assert wrong.status_code == unknown.status_code == invalid.status_code == 401
    assert wrong.content == unknown.content == invalid.content
    assert wrong.headers.get("www-authenticate") == unknown.headers.get("www-authenticate")


class CountingPasswords:
    """The real (cheap) argon2, with every check recorded: which stored hash, and its cost."""

    def __init__(self) -> None:
        self.inner = fast_test_passwords()
        self.checked: list[str] = []

    async def hash(self, password: str) -> str:
        return await self.inner.hash(password)

    async def verify(self, stored: str, password: str) -> bool:
        self.checked.append(stored)
        return await self.inner.verify(stored, password)


async def test_an_unknown_user_costs_one_argon2_check_with_the_same_parameters(tmp_path):
    passwords = CountingPasswords()
    store = FileStoreFactory(tmp_path).accounts
    service = await AccountService.open(
        store, passwords, FixedClock(), SequentialIds(), session_hours=1
    )
    from shared_contracts.accounts import Credentials

    await service.sign_up(Credentials(username="ada", password="correct horse"), "a")
    for credentials in (
        Credentials(username="ada", password="wrong horse"),
        Credentials(username="nobody", password="wrong horse"),
    ):
        with pytest.raises(Exception, match="unknown username or wrong password"):
            await service.sign_in(credentials, "a")
    real, dummy = passwords.checked
    assert real != dummy
    assert real.rsplit("$", 2)[0] == dummy.rsplit("$", 2)[0]  # same algorithm and parameters


def test_sign_in_is_rate_limited_per_name_before_any_password_is_checked(client):
    client.post("/api/accounts", json=PAIR)
    answers = [
        client.post("/api/session", json={**PAIR, "password": f"guess {n}"}).status_code
        for n in range(7)
    ]
    assert answers[:5] == [401] * 5 and answers[5:] == [429, 429]
    limited = client.post("/api/session", json=PAIR)  # even the right password, for now
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    assert limited.json()["code"] == "rate_limited"
    other = client.post("/api/session", json={"username": "someone", "password": "x" * 8})
    assert other.status_code == 401  # another name is not locked out


def test_a_token_expires(tmp_path):
    clock = FixedClock(step=timedelta(0))
    app, _ = accounts_app(tmp_path / "data", clock=clock, settings={"session_hours": 2})
    with TestClient(app=app) as client:
        learner = sign_up_and_in(client, "ada")
        assert client.get("/api/chats", headers=learner.auth).status_code == 200
        clock.current += timedelta(hours=2)
        assert client.get("/api/chats", headers=learner.auth).status_code == 401
        assert not (
            tmp_path / "data/accounts/sessions" / f"{token_digest(learner.token)}.json"
        ).exists()


async def test_a_sign_in_removes_expired_sessions_at_most_once_an_hour(tmp_path):
    clock = FixedClock(step=timedelta(0))
    data = tmp_path / "data"
    store = FileStoreFactory(data).accounts
    service = await AccountService.open(
        store, fast_test_passwords(), clock, SequentialIds(), session_hours=2
    )
    from shared_contracts.accounts import Credentials

    ada = Credentials(username="ada", password="correct horse")
    await service.sign_up(ada, "a")
    sessions = data / "accounts" / "sessions"
    await service.sign_in(ada, "a")  # never presented again
    clock.current += timedelta(hours=3)
    await service.sign_in(ada, "a")  # the first sign-in of this process sweeps
    assert len(list(sessions.iterdir())) == 1
    clock.current += timedelta(hours=3)
    await service.sign_in(ada, "a")  # swept an hour and more ago: sweeps again
    assert len(list(sessions.iterdir())) == 1
    clock.current += timedelta(minutes=59)
    await service.sign_in(ada, "a")  # within the hour: leaves the others for now
    assert len(list(sessions.iterdir())) == 2


def test_only_the_token_digest_is_stored(tmp_path):
    app, _ = accounts_app(tmp_path / "data")
    with TestClient(app=app) as client:
        learner = sign_up_and_in(client, "ada")
    stored = b"".join(p.read_bytes() for p in (tmp_path / "data").rglob("*") if p.is_file())
    assert learner.token.encode() not in stored
    assert b"correct horse" not in stored
    assert b"$argon2id$" in stored


def test_each_learner_sees_only_their_own_chats_in_their_own_directory(tmp_path):
    app, _ = accounts_app(tmp_path / "data")
    with TestClient(app=app) as client:
        ada, bob = sign_up_and_in(client, "ada"), sign_up_and_in(client, "bob")
        mine = client.post("/api/chats", json={"title": "ada's"}, headers=ada.auth).json()
        client.post("/api/chats", json={"title": "bob's"}, headers=bob.auth)
        assert [c["title"] for c in client.get("/api/chats", headers=ada.auth).json()] == ["ada's"]
        assert [c["title"] for c in client.get("/api/chats", headers=bob.auth).json()] == ["bob's"]
    files = list((tmp_path / "data/learners").glob(f"*/chats/{mine['id']}.json"))
    assert len(files) == 1 and not (tmp_path / "data/chats").exists()


def test_local_mode_has_no_accounts_routes_and_needs_no_sign_in(tmp_path):
    app = create_app(Settings(data_dir=tmp_path / "data"), model=ScriptedModel([]))
    with TestClient(app=app) as client:
        assert client.post("/api/accounts", json=PAIR).status_code == 404
        assert client.post("/api/session", json=PAIR).status_code == 404
        assert client.get("/api/chats").status_code == 200


@pytest.mark.parametrize(
    ("settings", "refused"),
    [
        ({"api_host": "0.0.0.0"}, "LH_API_TOKEN"),
        ({"api_host": "192.0.2.10"}, "LH_API_TOKEN"),
        ({"api_host": "::"}, "LH_API_TOKEN"),
        ({"api_host": "0.0.0.0", "api_token": "t"}, None),
        ({"api_host": "127.0.0.2"}, None),
        ({"api_host": "::1"}, None),
        ({"api_host": "localhost"}, None),
        ({"api_host": "0.0.0.0", "auth": "accounts"}, None),
        ({"auth": "accounts", "api_token": "t"}, "unset LH_API_TOKEN"),
    ],
)
def test_local_mode_refuses_a_network_host_without_a_token(tmp_path, settings, refused):
    chosen = Settings(data_dir=tmp_path, **settings)
    if refused is None:
        check_exposure(chosen)
        return
    with pytest.raises(SettingsError, match=refused):
        create_app(chosen)


def test_harness_serve_refuses_a_network_host_in_local_mode(tmp_path, monkeypatch, capsys):
    from backend.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LH_API_HOST", "0.0.0.0")
    monkeypatch.delenv("LH_API_TOKEN", raising=False)
    monkeypatch.delenv("LH_AUTH", raising=False)
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "LH_AUTH=local has no login" in err and "Traceback" not in err


def test_lh_auth_takes_local_or_accounts_only():
    from backend.server.settings import load_settings

    assert load_settings({"LH_AUTH": "accounts"}).auth == "accounts"
    assert load_settings({}).auth == "local"
    with pytest.raises(SettingsError, match="LH_AUTH must be local or accounts"):
        load_settings({"LH_AUTH": "ldap"})


def test_harness_verify_reads_every_learners_files_and_the_accounts(tmp_path):
    from backend.server.stores import verify

    data = tmp_path / "data"
    app, _ = accounts_app(data)
    with TestClient(app=app) as client:
        ada = sign_up_and_in(client, "ada")
        chat = client.post("/api/chats", json={}, headers=ada.auth).json()["id"]
    assert verify(data) == []
    [record] = list((data / "learners").glob(f"*/chats/{chat}.json"))
    record.write_bytes(b"{")
    (data / "accounts/users/bob.json").write_bytes(b"[]")
    problems = verify(data)
    learner = record.parent.parent.name
    assert any(p.startswith(f"learners/{learner}/chats/{chat}.json") for p in problems)
    assert any(p.startswith("accounts/users/bob.json") for p in problems)


def test_an_open_socket_closes_on_its_next_frame_once_the_learner_signed_out(client):
    from litestar.exceptions import WebSocketDisconnect

    ada = sign_up_and_in(client, "ada")
    chat = client.post("/api/chats", json={}, headers=ada.auth).json()["id"]
    with client.websocket_connect(f"/api/chats/{chat}/ws", headers=ada.auth) as ws:
        ws.receive_text(timeout=5)  # snapshot
        ws.send_text('{"type": "ping"}')
        assert "pong" in ws.receive_text(timeout=5)
        assert client.delete("/api/session", headers=ada.auth).status_code == 204
        ws.send_text('{"type": "ping"}')
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text(timeout=5)
    assert closed.value.code == 4401
