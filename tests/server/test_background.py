"""Jobs and extraction through the real app: results arrive while the lesson goes on."""

from __future__ import annotations

import msgspec

from shared_contracts.frames import GraphUpdated, JobFrame, ServerFrame, TurnFinished
from tests.fakes import ScriptedModel, text_reply, tool_reply

DECODE = msgspec.json.Decoder(ServerFrame)


def frames_until(ws, predicate, limit=200):
    seen = []
    for _ in range(limit):
        frame = DECODE.decode(ws.receive_text(timeout=10))
        seen.append(frame)
        if predicate(seen):
            return seen
    raise AssertionError(f"condition not met in {limit} frames: {seen[-5:]}")


def finished(n):
    return lambda seen: sum(isinstance(f, TurnFinished) for f in seen) >= n


def test_a_research_job_arrives_and_is_delivered_to_the_teacher(client_factory):
    model = ScriptedModel(
        [
            tool_reply([("r1", "research", {"question": "Why do leaves look green?"})]),
            text_reply("While that runs: leaves absorb red and blue light."),
            text_reply("The research note is in — have a look."),
        ]
    )
    client = client_factory(model)
    chat = client.post("/api/chats").json()["id"]
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        ws.receive_text(timeout=5)
        ws.send_text('{"type": "user_message", "text": "leaves"}')
        seen = frames_until(
            ws, lambda s: finished(2)(s) and any(isinstance(f, JobFrame) for f in s)
        )
    jobs = [f.job for f in seen if isinstance(f, JobFrame)]
    assert jobs[-1].status == "done" and jobs[-1].result is not None
    assert client.get(f"/api/jobs/{jobs[-1].id}").json()["status"] == "done"
    delivery = model.requests[2].messages
    assert delivery[-1].role == "user" and "research note" in delivery[-1].content
    tool_output = next(m for m in delivery if m.role == "tool" and m.tool_call_id == "r1")
    assert "research_note" in tool_output.content
    view = client.get(f"/api/chats/{chat}").json()
    part = view["messages"][1]["parts"][0]
    assert part["state"] == "output-available" and part["job_id"] == jobs[-1].id


QUIZ = {
    "node_id": "n1",
    "question": {"kind": "numeric", "prompt": "2+2?", "answer": 4, "explanation": "Add."},
}
PLAN = {"goal": "Sums", "nodes": [{"id": "n1", "title": "Adding small numbers"}]}


def test_three_answers_trigger_extraction_and_a_graph_update(client_factory):
    steps = [tool_reply([("p", "plan_init", PLAN), ("q0", "quiz", QUIZ)])]
    for i in range(1, 4):
        steps.append(tool_reply([(f"q{i}", "quiz", QUIZ)], text=f"Again {i}."))
    steps.append(text_reply("Done."))
    client = client_factory(ScriptedModel(steps), every_n_quiz_answers=3)
    chat = client.post("/api/chats").json()["id"]
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        ws.receive_text(timeout=5)
        ws.send_text('{"type": "user_message", "text": "sums"}')
        frames_until(ws, finished(1))
        for i, answer in enumerate(["4", "5", "4"]):
            ws.send_text(
                msgspec.json.encode(
                    {"type": "answer", "tool_call_id": f"q{i}", "answer": answer}
                ).decode()
            )
            frames_until(ws, finished(1))
        seen = frames_until(ws, lambda s: any(isinstance(f, GraphUpdated) for f in s))
    update = next(f for f in seen if isinstance(f, GraphUpdated))
    assert update.stats.nodes >= 1 and update.stats.events >= 3
    graph = client.get("/api/graph").json()
    assert graph["stats"]["events"] >= 3
    before = client.get("/api/graph").json()
    client.post(f"/api/chats/{chat}/extract")
    assert client.get("/api/graph").json()["stats"] == before["stats"]
