"""A lesson taught from the learner's document, with no model key, through the real app:
a newcomer uploads a Markdown file and gets a real lesson from it; its trace replays
identically (the replay reads the same documents)."""

from __future__ import annotations

from pathlib import Path

import anyio
import msgspec

from backend.replay.runner import run_replay
from backend.server.stores import build_stores
from shared_contracts.frames import Plan, Question, ServerFrame, TextDelta, TurnFinished
from tests.materials.samples import PLANTS_MD
from tests.server.conftest import make_client

DECODE = msgspec.json.Decoder(ServerFrame)


def _until_finished(ws) -> list:
    seen: list = []
    while not any(isinstance(f, TurnFinished) for f in seen):
        seen.append(DECODE.decode(ws.receive_text(timeout=10)))
    return seen


def test_an_uploaded_markdown_file_becomes_a_lesson_that_replays(tmp_path: Path):
    client = make_client(tmp_path, None)  # no key: the offline tutor, built by the app
    with client:
        files = {"file": ("plants.md", PLANTS_MD)}
        material = client.post("/api/materials", files=files).json()
        chat = client.post("/api/chats", json={"material_id": material["id"]}).json()["id"]
        with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
            ws.receive_text(timeout=5)
            ws.send_text('{"type": "user_message", "text": "Teach me chapter 2"}')
            first = _until_finished(ws)
            said = "".join(f.delta for f in first if isinstance(f, TextDelta))
            (plan,) = [f.tree for f in first if isinstance(f, Plan)]
            (question,) = [f for f in first if isinstance(f, Question)]
            # The lesson is the document's chapter, quoted with its page, checked on it.
            assert "Water and roots" in plan.goal or "Water and roots" in plan.nodes[0].title
            assert "(page 1)" in said and "xylem" in said
            assert all(p.material_id == material["id"] for n in plan.nodes for p in n.passages)
            assert "correct" not in msgspec.json.encode(question.question).decode()
            answer = {"type": "answer", "tool_call_id": question.tool_call_id, "answer": "x"}
            ws.send_text(msgspec.json.encode(answer).decode())
            second = _until_finished(ws)
            assert "Not quite" in "".join(f.delta for f in second if isinstance(f, TextDelta))

    async def replay():
        return await run_replay(build_stores(tmp_path / "data"), chat, tmp_path / "replay")

    result = anyio.run(replay)
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
