"""Issue 22 (security): two accounts, hundreds of hostile attempts across them — the other
learner's ids, forged, stale and borrowed tokens, WebSocket paths, job and trace routes.

Every attempt is refused (4xx, or a WebSocket closed before `accept`) before any store is
called — proven by the counting store factory injected at the composition root — and no
answer holds a byte of the other learner's data. Another learner's id answers exactly as
an id that does not exist (same status, headers and body, the id aside)."""

from __future__ import annotations

import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial

import msgspec
import pytest
from litestar.testing import TestClient

from backend.accounts.service import token_digest
from shared_contracts.frames import ServerFrame, TurnFinished
from shared_contracts.jobs import Job
from tests.counting_stores import CallLog, CountingStoreFactory
from tests.fakes import ScriptedModel, text_reply
from tests.reliability.asgi_ws import handshake
from tests.reliability.figures import table
from tests.server.accounts_app import SignedInLearner, accounts_app, sign_up_and_in

FRAMES = msgspec.json.Decoder(ServerFrame)
LOOPBACK = ("127.0.0.1", 50123)


@dataclass
class Owner:
    """A signed-in learner with a chat, a trace and a job, each carrying a secret marker."""

    signed_in: SignedInLearner
    learner_id: str
    chat_id: str
    job_id: str
    secrets: tuple[str, ...]

    @property
    def auth(self) -> dict[str, str]:
        return self.signed_in.auth


def _one_turn(client: TestClient, owner_auth: dict[str, str], chat_id: str, text: str) -> None:
    with client.websocket_connect(f"/api/chats/{chat_id}/ws", headers=owner_auth) as ws:
        FRAMES.decode(ws.receive_text(timeout=5))  # snapshot
        ws.send_text(msgspec.json.encode({"type": "user_message", "text": text}).decode())
        while not isinstance(FRAMES.decode(ws.receive_text(timeout=10)), TurnFinished):
            pass


def _owner(client, factory: CountingStoreFactory, name: str) -> Owner:
    marks = tuple(
        f"{name}-secret-{part}-{secrets.token_hex(4)}" for part in ("title", "ask", "job")
    )
    signed_in = sign_up_and_in(client, name)
    chat = client.post("/api/chats", json={"title": marks[0]}, headers=signed_in.auth).json()
    _one_turn(client, signed_in.auth, chat["id"], marks[1])
    account = client.blocking_portal.call(factory.accounts.find, name)
    learner_id = account.learner_id
    job = Job(
        id=f"job-{secrets.token_hex(6)}",
        chat_id=chat["id"],
        tool_call_id="call_1",
        kind="research",
        status="failed",
        error=marks[2],
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    jobs = factory.inner.for_learner(learner_id).jobs  # the test's own seed, uncounted
    client.blocking_portal.call(jobs.save, job)
    return Owner(signed_in, learner_id, chat["id"], job.id, marks)


@pytest.fixture(params=["files", "postgresql"])
def world(request, tmp_path):
    # a database of its own: sign-up limits are shared in it, and every world signs up
    # from the test client's one address
    pg = request.getfixturevalue("pg_cluster") if request.param == "postgresql" else None
    url = pg.create_database() if pg is not None else None
    model = ScriptedModel([text_reply("ada's lesson"), text_reply("bob's lesson")])
    app, counting = accounts_app(tmp_path / "data", database_url=url, model=model)
    with TestClient(app=app) as client:
        factory = counting.factory
        assert factory is not None
        tag = secrets.token_hex(3)  # the PostgreSQL database is shared by the session's tests
        ada = _owner(client, factory, f"ada-{tag}")
        bob = _owner(client, factory, f"bob-{tag}")
        _settled(factory.log)
        yield app, client, factory, ada, bob


def _settled(log: CallLog, quiet_s: float = 1.0, limit_s: float = 30.0) -> None:
    """Back once no store call has been made for `quiet_s`: the owners' turns leave work
    behind (their trace flushed, their sessions closed) that a loaded machine runs after the
    socket has closed, and a call it makes must not be taken for a hostile request's."""
    deadline = time.monotonic() + limit_s
    seen, since = log.mark(), time.monotonic()
    while time.monotonic() - since < quiet_s:
        assert time.monotonic() < deadline, f"store calls never stopped: {log.since(seen)[:3]}"
        time.sleep(0.05)
        if log.mark() != seen:
            seen, since = log.mark(), time.monotonic()


Attempt = Callable[[], tuple[str, bytes]]
"""One hostile request: (its outcome — an HTTP status or a WebSocket close — and the bytes
it got back)."""


def _http(client, method: str, path: str, headers: dict[str, str]) -> Attempt:
    def attempt() -> tuple[str, bytes]:
        response = client.request(method, path, headers=headers)
        return str(response.status_code), response.content

    return attempt


def _ws(app, client, path: str, headers: dict[str, str], query: str = "") -> Attempt:
    def attempt() -> tuple[str, bytes]:
        call = partial(handshake, app, path, client=LOOPBACK, headers=headers, query=query)
        result = client.blocking_portal.call(call)
        outcome = "accepted" if result.accepted else f"ws {result.code}"
        return outcome, "".join(result.frames).encode()

    return attempt


def _routes(chat_id: str, job_id: str) -> list[tuple[str, str]]:
    return [
        ("GET", f"/api/chats/{chat_id}"),
        ("POST", f"/api/chats/{chat_id}/extract"),
        ("GET", f"/api/chats/{chat_id}/trace"),
        ("GET", f"/api/jobs/{job_id}"),
    ]


def _id_variants(victim: Owner) -> list[tuple[str, str]]:
    """(chat id, job id) pairs naming the victim's data, directly or by a trick."""
    chat, job, learner = victim.chat_id, victim.job_id, victim.learner_id
    return [
        (chat, job),
        (job, chat),  # each as the other kind
        (learner, learner),  # the victim's learner id (their directory's name)
        (chat.upper(), job.upper()),
        (f"{chat}%0A", f"{job}%0A"),
        (
            f"..%2Flearners%2F{learner}%2Fchats%2F{chat}",
            f"..%2F..%2Flearners%2F{learner}%2Fjobs%2F{job}",
        ),
        (f"learners%2F{learner}%2F{chat}", f"learners%2F{learner}%2F{job}"),
        (f"{chat}.json", f"{job}.json"),
        (f"{chat}%00", f"{job}%00"),
        (f"%2e%2e%2f{chat}", f"%2e%2e%2f{job}"),
    ]


def _foreign_id_attempts(app, client, attacker: Owner, victim: Owner) -> list[tuple[str, Attempt]]:
    found = []
    for chat_id, job_id in _id_variants(victim):
        for method, path in _routes(chat_id, job_id):
            found.append((f"{method} foreign id", _http(client, method, path, attacker.auth)))
        ws_path = f"/api/chats/{chat_id}/ws"
        found.append(("WS foreign chat (header)", _ws(app, client, ws_path, attacker.auth)))
        found.append(
            (
                "WS foreign chat (?token=)",
                _ws(app, client, ws_path, {}, f"token={attacker.signed_in.token}"),
            )
        )
    return found


def _bad_tokens(victim: Owner, signed_out: str) -> list[tuple[str, dict[str, str], str]]:
    """(label, headers, WebSocket query) with a token that signs no one in."""
    real = victim.signed_in.token
    flipped = real[:-1] + ("A" if real[-1] != "A" else "B")
    return [
        ("no token", {}, ""),
        ("empty bearer", {"Authorization": "Bearer "}, "token="),
        (
            "random token",
            {"Authorization": f"Bearer {secrets.token_urlsafe(32)}"},
            f"token={secrets.token_urlsafe(32)}",
        ),
        (
            "digest as token",
            {"Authorization": f"Bearer {token_digest(real)}"},
            f"token={token_digest(real)}",
        ),
        ("one char changed", {"Authorization": f"Bearer {flipped}"}, f"token={flipped}"),
        ("truncated", {"Authorization": f"Bearer {real[:20]}"}, f"token={real[:20]}"),
        ("signed out", {"Authorization": f"Bearer {signed_out}"}, f"token={signed_out}"),
        ("basic scheme", {"Authorization": f"Basic {real}"}, ""),
        ("token twice", {"Authorization": f"Bearer {real} {real}"}, f"token={real}{real}"),
        ("oversized", {"Authorization": "Bearer " + "a" * 5000}, "token=" + "a" * 5000),
        (
            "username as token",
            {"Authorization": f"Bearer {victim.signed_in.username}"},
            "token=bob",
        ),
        (
            "learner id as token",
            {"Authorization": f"Bearer {victim.learner_id}"},
            f"token={victim.learner_id}",
        ),
    ]


def _bad_token_attempts(app, client, victim: Owner, signed_out: str) -> list[tuple[str, Attempt]]:
    found = []
    own_routes = [
        ("GET", "/api/chats"),
        ("POST", "/api/chats"),
        ("GET", "/api/graph"),
        ("GET", "/api/graph/context"),
        ("GET", "/api/export"),
        ("GET", "/api/review"),
        ("GET", "/api/calibration"),
    ]
    for label, headers, query in _bad_tokens(victim, signed_out):
        for method, path in [*own_routes, *_routes(victim.chat_id, victim.job_id)]:
            found.append((f"{method} {label}", _http(client, method, path, headers)))
        ws_path = f"/api/chats/{victim.chat_id}/ws"
        found.append(
            (f"WS {label}", _ws(app, client, ws_path, headers if not query else {}, query))
        )
    return found


def _refused(outcome: str) -> bool:
    return outcome in {"400", "401", "404"} or (
        outcome.startswith("ws 44") and outcome != "accepted"
    )


def test_hundreds_of_hostile_attempts_are_refused_before_any_store_call(world):
    app, client, factory, ada, bob = world
    spare = sign_up_and_in(client, f"carol-{secrets.token_hex(3)}")
    assert client.delete("/api/session", headers=spare.auth).status_code == 204
    attempts: list[tuple[str, Attempt]] = []
    for attacker, victim in ((ada, bob), (bob, ada)):
        attempts += _foreign_id_attempts(app, client, attacker, victim)
        attempts += _bad_token_attempts(app, client, victim, spare.token)
    attempts = attempts * 2  # each again, after the first round warmed every cache
    assert len(attempts) >= 500

    outcomes: Counter[str] = Counter()
    leaked, called = [], []
    for label, attempt in attempts:
        mark = factory.log.mark()
        outcome, body = attempt()
        outcomes[outcome] += 1
        if not _refused(outcome):
            leaked.append((label, outcome))
        calls = factory.log.since(mark)
        if calls:
            called.append((label, calls))
        for secret in ada.secrets + bob.secrets:
            if secret.encode() in body:
                leaked.append((label, secret))
    probes = len(factory.log.probes)
    table(
        "hostile attempts across two learners",
        [
            ("attempts", len(attempts)),
            ("refused", sum(n for o, n in outcomes.items() if _refused(o))),
            ("outcomes", dict(sorted(outcomes.items()))),
            ("store calls made by them", sum(len(c) for _, c in called)),
            ("ownership probes answered", probes),
            ("bytes of the other's data", 0 if not leaked else "LEAKED"),
        ],
    )
    assert not leaked, leaked[:5]
    assert not called, called[:3]


def test_the_owner_gets_the_same_requests_answered_and_the_counter_sees_them(world):
    """The control: the very requests refused above work for their owner, and each of them
    calls a store (so the counter can see a call when one happens)."""
    app, client, factory, ada, _ = world
    for method, path in _routes(ada.chat_id, ada.job_id):
        mark = factory.log.mark()
        response = client.request(method, path, headers=ada.auth)
        assert response.status_code in (200, 202), (path, response.text)
        assert factory.log.since(mark), f"{method} {path} called no store"
    job = client.get(f"/api/jobs/{ada.job_id}", headers=ada.auth).json()
    assert job["error"] == ada.secrets[2]
    result = client.blocking_portal.call(
        partial(handshake, app, f"/api/chats/{ada.chat_id}/ws", client=LOOPBACK, headers=ada.auth)
    )
    assert result.accepted and ada.secrets[0] in result.frames[0]


def test_another_learners_id_answers_exactly_as_a_missing_one(world):
    app, client, _, ada, bob = world
    missing_chat = "chat-" + "0" * (len(bob.chat_id) - 5)
    missing_job = "job-" + "0" * (len(bob.job_id) - 4)
    pairs = zip(_routes(bob.chat_id, bob.job_id), _routes(missing_chat, missing_job), strict=True)
    for (method, foreign), (_, missing) in pairs:
        a = client.request(method, foreign, headers=ada.auth)
        b = client.request(method, missing, headers=ada.auth)
        assert a.status_code == b.status_code == 404
        swapped = b.content.replace(missing_chat.encode(), bob.chat_id.encode())
        swapped = swapped.replace(missing_job.encode(), bob.job_id.encode())
        assert a.content == swapped
        assert dict(a.headers) == dict(b.headers)
    for chat_id in (bob.chat_id, missing_chat):
        call = partial(
            handshake, app, f"/api/chats/{chat_id}/ws", client=LOOPBACK, headers=ada.auth
        )
        result = client.blocking_portal.call(call)
        assert not result.accepted and result.code == 4404
