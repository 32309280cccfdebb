"""A full offline-tutor lesson over a real loopback server (no model key, no network)."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager

import httpx
import uvicorn

from backend.cli.serving import uvicorn_config
from backend.server.app import create_app
from backend.server.settings import Settings
from shared_contracts.frames import JobFrame, Plan, TurnFinished
from tests.lesson_driver import take_lesson


@contextmanager
def running_api(tmp_path, **settings):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(Settings(data_dir=tmp_path / "data", api_port=port, **settings))
    server = uvicorn.Server(uvicorn_config(app))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


async def test_a_whole_offline_lesson_with_three_quizzes(tmp_path):
    with running_api(tmp_path) as host:
        async with httpx.AsyncClient(base_url=f"http://{host}") as http:
            chat = (await http.post("/api/chats", json={})).json()["id"]
            log = await take_lesson(f"ws://{host}/api/chats/{chat}/ws", "teach me fractions")
            view = (await http.get(f"/api/chats/{chat}")).json()
            (await http.post(f"/api/chats/{chat}/extract")).raise_for_status()  # End session
            graph = (await http.get("/api/graph")).json()
    assert not log.errors, log.errors
    assert len(log.verdicts) >= 3
    kinds = {q.question.kind for q in log.questions}
    assert {"multiple_choice", "numeric"} <= kinds or len(kinds) >= 3, kinds
    assert "ask_user" in kinds
    assert any(isinstance(f, Plan) for f in log.frames)
    assert log.turns[-1].reason == "stop"
    # research, demo and visual arrived as job frames while the lesson went on
    jobs = {f.job.kind: f.job for f in log.frames if isinstance(f, JobFrame)}
    assert set(jobs) == {"research", "demo", "visual"}, jobs
    assert all(job.status == "done" for job in jobs.values())
    assert view["plan"]["nodes"]
    assert view["pending_question"] is None
    assert graph["stats"]["nodes"] >= 1 and graph["stats"]["events"] >= 3
    # What the lesson rested on without teaching it: outline-only nodes, backed by the
    # teacher's own sentence, that the nodes needing them point at.
    unseen = {n["statement"]: n for n in graph["nodes"] if n["state"] == "unseen"}
    assert set(unseen) == {"Multiplying and dividing whole numbers", "Adding whole numbers"}
    assert all(n["evidence"][0]["speaker"] == "teacher" for n in unseen.values())
    needs = {e["to"] for e in graph["edges"] if e["type"] == "requires"}
    assert {n["id"] for n in unseen.values()} <= needs
    assert graph["stats"]["by_state"]["unseen"] == 2
    print(
        f"\nlesson: {len(log.turns)} turns, {len(log.questions)} questions,"
        f" {len(log.verdicts)} verdicts, graph {graph['stats']}"
    )
    assert isinstance(log.frames[-1], TurnFinished)
