"""With accounts, the graph's read channel and the teacher's context are the learner's own:
one learner's propositions never reach another's graph, context block or prompt."""

from __future__ import annotations

import msgspec
from litestar.testing import TestClient

from backend.core.ports import LedgerBatch
from shared_contracts.frames import ServerFrame, TurnFinished
from shared_contracts.graph import PropositionLine
from tests.fakes import ScriptedModel, text_reply
from tests.server.accounts_app import accounts_app, sign_up_and_in
from tests.unit.store.factories import at

FRAMES = msgspec.json.Decoder(ServerFrame)
BOBS = "the mitochondrion is where bob keeps his secrets"


def _turn(client: TestClient, auth: dict[str, str]) -> None:
    chat = client.post("/api/chats", json={}, headers=auth).json()["id"]
    with client.websocket_connect(f"/api/chats/{chat}/ws", headers=auth) as ws:
        ws.receive_text(timeout=5)
        ws.send_text('{"type": "user_message", "text": "teach me"}')
        while not isinstance(FRAMES.decode(ws.receive_text(timeout=10)), TurnFinished):
            pass


def test_graph_context_and_prompt_are_each_learners_own(tmp_path):
    model = ScriptedModel([text_reply("one"), text_reply("two")])
    app, counting = accounts_app(tmp_path / "data", model=model)
    with TestClient(app=app) as client:
        ada, bob = sign_up_and_in(client, "ada"), sign_up_and_in(client, "bob")
        assert counting.factory is not None
        bob_id = client.blocking_portal.call(counting.factory.accounts.find, "bob").learner_id
        line = PropositionLine(
            id="p-bob", statement=BOBS, kind="misconception", chat_id="chat-seed", created_at=at(0)
        )  # an open misconception: in bob's review queue as soon as it exists
        graph = counting.factory.inner.for_learner(
            bob_id
        ).graph  # seeded before bob's first request
        client.blocking_portal.call(graph.append, LedgerBatch(propositions=[line]))

        for who, sees in ((ada, False), (bob, True)):
            snapshot = client.get("/api/graph", headers=who.auth).json()
            assert any(n["statement"] == BOBS for n in snapshot["nodes"]) is sees
            context = client.get("/api/graph/context", headers=who.auth).json()["markdown"]
            assert (BOBS in context) is sees
            review = client.get("/api/review", headers=who.auth)
            assert review.status_code == 200 and (BOBS in review.text) is sees
        _turn(client, ada.auth)
        _turn(client, bob.auth)
    ada_prompt, bob_prompt = (msgspec.json.encode(r).decode() for r in model.requests)
    assert BOBS not in ada_prompt and BOBS in bob_prompt
