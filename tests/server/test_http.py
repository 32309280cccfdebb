"""HTTP routes: bodies are Structs, errors are JSON, ids never become paths."""

from __future__ import annotations

from tests.fakes import ScriptedModel


def test_health_create_list_get(client_factory):
    client = client_factory(ScriptedModel([]))
    health = client.get("/healthz").json()
    assert health == {"status": "ok", "model": "offline", "offline": True, "auth": "local"}
    first = client.post("/api/chats", json={"title": "Fractions"}).json()
    second = client.post("/api/chats").json()
    assert second["title"] == "New session"
    listed = client.get("/api/chats").json()
    assert [c["id"] for c in listed] == [second["id"], first["id"]]
    view = client.get(f"/api/chats/{first['id']}").json()
    assert view["title"] == "Fractions" and view["offline"] is True and view["messages"] == []


def test_bad_ids_and_missing_chats_are_json_errors(client_factory):
    client = client_factory(ScriptedModel([]))
    for path, statuses in [
        ("/api/chats/..%2f..%2fetc", {400, 404}),
        ("/api/chats/%2e%2e", {400}),
        ("/api/chats/ABC", {400}),
        ("/api/chats/" + "a" * 200, {400}),
        ("/api/chats/missing", {404}),
    ]:
        response = client.get(path)
        assert response.status_code in statuses, path
        body = response.json()
        assert body["status_code"] == response.status_code
        assert "data" not in body["detail"]  # never a file path


def test_bad_bodies_are_400(client_factory):
    client = client_factory(ScriptedModel([]))
    assert client.post("/api/chats", json={"title": 5}).status_code == 400
    assert client.post("/api/chats", json={"title": "x", "extra": 1}).status_code == 400
    broken = client.post(
        "/api/chats", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert broken.status_code == 400


def test_openapi_lists_the_routes(client_factory):
    client = client_factory(ScriptedModel([]))
    doc = client.get("/schema/openapi.json").json()
    for path in ("/healthz", "/api/chats", "/api/chats/{chat_id}"):
        assert path in doc["paths"]
    assert "ChatView" in doc["components"]["schemas"]


def test_graph_routes_on_an_empty_graph(client_factory):
    client = client_factory(ScriptedModel([]))
    graph = client.get("/api/graph").json()
    assert graph["nodes"] == [] and graph["edges"] == [] and graph["stats"]["nodes"] == 0
    assert client.get("/api/graph/context").json()["markdown"] == ""
    assert client.get("/api/jobs/job-missing").status_code == 404
    assert client.get("/api/jobs/..%5c..").status_code in (400, 404)
    chat = client.post("/api/chats").json()["id"]
    accepted = client.post(f"/api/chats/{chat}/extract")
    assert accepted.status_code == 202 and accepted.json()["chat_id"] == chat
    assert client.post("/api/chats/nochat/extract").status_code == 404
    assert client.get(f"/api/chats/{chat}/trace").json() == []
