"""Prerequisite checks over the real app (issue 19 item 7): a plan naming a node the
learner's graph holds, whose prerequisite is weak, gets a "check first" node for it and the
teacher is told; moving on without probing it marks it skipped in the plan and, at the
session's end, as a `check_skipped` event on the prerequisite in the ledger. The learner is
never blocked."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from litestar.testing import TestClient

from backend.agent.offline import OfflineTutor
from backend.server.app import create_app
from backend.server.settings import Settings
from shared_contracts.frames import Plan, Question, ServerFrame, ToolResult, TurnFinished
from shared_contracts.tools import PlanOutput
from tests.fakes import FixedClock, ScriptedModel, text_reply, tool_reply
from tests.server.learner_graph import NOW, write_graph
from tests.server.test_learner_routes import StillClock
from tests.server.test_review_session import T0, folded, session

DECODE = msgspec.json.Decoder(ServerFrame)
PLAN = {
    "goal": "Add fractions",
    "nodes": [{"id": "add", "title": "Adding fractions needs a common denominator"}],
}
QUIZ = {
    "node_id": "add",
    "question": {"kind": "short_answer", "prompt": "1/4 + 1/2 = ?", "accepted": ["3/4"]},
}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, ScriptedModel, Path]]:
    data = tmp_path / "data"
    write_graph(data)  # "Adding fractions ..." requires p-den, answered wrong (shaky)
    model = ScriptedModel(
        [
            tool_reply([("call_plan", "plan_init", PLAN)], text="Here is the plan."),
            tool_reply([("call_quiz", "quiz", QUIZ)], text="Straight to adding:"),
            text_reply("Right."),
        ]
    )
    app = create_app(Settings(data_dir=data), model=model, clock=StillClock(NOW))
    with TestClient(app=app) as client:
        yield client, model, data


def frames_until_finished(ws) -> list[ServerFrame]:
    frames: list[ServerFrame] = []
    while not frames or not isinstance(frames[-1], TurnFinished):
        frames.append(DECODE.decode(ws.receive_text(timeout=10)))
    return frames


def test_a_weak_prerequisite_is_checked_first_and_moving_past_it_is_recorded(served):
    client, model, data = served
    chat = client.post("/api/chats").json()["id"]
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        ws.receive_text(timeout=10)  # the snapshot
        ws.send_text('{"type": "user_message", "text": "teach me to add fractions"}')
        frames = frames_until_finished(ws)
        (planned,) = [f.part.output for f in frames if isinstance(f, ToolResult)]
        assert isinstance(planned, PlanOutput)
        first, second = planned.tree.nodes
        assert (first.id, second.id, planned.tree.current) == ("p-den", "add", "p-den")
        assert first.title == "The denominator counts the equal parts"
        assert first.check and first.check.reason == "shaky" and first.check.for_nodes == ["add"]
        (note,) = planned.notes
        assert "Check first" in note and "node_id “p-den”" in note
        told = model.requests[1].messages  # the teacher read the note in the tool result
        assert any("Check first" in m.content for m in told if m.role == "tool")

        plans = [f.tree for f in frames if isinstance(f, Plan)]
        skipped = {n.id: n.status for n in plans[-1].nodes}
        assert skipped == {"p-den": "skipped", "add": "active"}  # moved on: not blocked
        question = next(f for f in frames if isinstance(f, Question))
        answer = {"type": "answer", "tool_call_id": question.tool_call_id, "answer": "3/4"}
        ws.send_text(json.dumps(answer))
        frames_until_finished(ws)

    assert client.post(f"/api/chats/{chat}/extract").status_code == 202
    deadline = time.monotonic() + 30
    events: list[dict] = []
    while time.monotonic() < deadline and not events:
        lines = (data / "graph" / "events.jsonl").read_text("utf-8").splitlines()
        events = [e for e in map(json.loads, lines) if e["kind"] == "check_skipped"]
        time.sleep(0.05)
    (skip,) = events
    assert (skip["node_id"], skip["chat_id"], skip["tool_call_id"]) == ("p-den", chat, "call_quiz")


def test_the_offline_tutor_probes_a_check_first_node_when_the_library_has_a_question(tmp_path):
    """A second fractions lesson: the prerequisites the first one rested on (unseen) are
    checked first, each with its library question; answered right, they are shown."""
    data = tmp_path / "data"
    app = create_app(Settings(data_dir=data), model=OfflineTutor(), clock=FixedClock(start=T0))
    with TestClient(app=app) as client:
        first = client.post("/api/chats").json()["id"]
        session(client, first, "teach me fractions", wrong=set())
        before = {n["statement"]: n["state"] for n in folded(client, first)["nodes"]}
        assert before["Adding whole numbers"] == "unseen"

        second = client.post("/api/chats").json()["id"]
        asked = [q.question.prompt for q in session(client, second, "fractions", wrong=set())]
        assert "What is $7 + 5$?" in asked and "What is $6 \\times 4$?" in asked
        plan = client.get(f"/api/chats/{second}").json()["plan"]["nodes"]
        checks = {n["title"]: n["status"] for n in plan if n.get("check")}
        assert checks == {
            "Multiplying and dividing whole numbers": "done",
            "Adding whole numbers": "done",
        }
        after = {n["statement"]: n["state"] for n in folded(client, second)["nodes"]}
        assert after["Adding whole numbers"] == after["Multiplying and dividing whole numbers"]
        assert after["Adding whole numbers"] == "verified"
