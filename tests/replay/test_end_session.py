"""A session ended with "End session" (`POST /api/chats/{id}/extract`, the extraction
flush) replays identically: the request is recorded as the learner's `end_session` action
of its own unit (`end:<n>`), and the replay re-issues it at its recorded turn."""

from __future__ import annotations

from pathlib import Path

import anyio
import msgspec

from backend.agent.offline.tutor import OfflineTutor
from backend.replay.runner import run_replay
from backend.server.dispatch import receive
from backend.server.recording import recording_tracer
from backend.server.settings import Settings
from backend.server.stores import build_stores
from shared_contracts.trace import ExtractionEvent, InboundFrameEvent
from tests.golden.record import (
    RIGHT,
    end_session,
    learner_frame,
    record_session,
    recorded_services,
    settle,
)
from tests.replay.random_sessions import frame
from tests.replay.test_replay_flows import until_finished
from tests.server.conftest import make_client

END = ("end", "")


def _extractions(events) -> list[ExtractionEvent]:
    return [e for e in events if isinstance(e, ExtractionEvent)]


def _ends(events) -> list[InboundFrameEvent]:
    return [e for e in events if isinstance(e, InboundFrameEvent) and e.scope.startswith("end:")]


async def test_a_session_ended_by_the_flush_replays_identically(tmp_path: Path):
    data = tmp_path / "data"
    # one graded answer: below every_n=3, so only the flush folds it into the graph
    chat = await record_session(data, [("say", "teach me fractions"), RIGHT, END])
    recorded = await build_stores(data).traces.read(chat)
    (end,) = _ends(recorded)
    assert end.scope == "end:0" and msgspec.json.decode(end.frame) == {"type": "end_session"}
    (run,) = _extractions(recorded)
    assert run.seq > end.seq and run.graph_hash_after
    result = await run_replay(build_stores(data), chat, tmp_path / "replay")
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    assert len(_extractions(result.events)) == 1


async def test_two_flushes_and_more_lesson_after_them_replay_identically(tmp_path: Path):
    """The learner ends, comes back, answers again and ends again: each request is its own
    unit; the second flush finds nothing new the first time round."""
    data = tmp_path / "data"
    steps = [("say", "photosynthesis please"), RIGHT, END, END, ("say", "what next?"), END]
    chat = await record_session(data, steps)
    recorded = await build_stores(data).traces.read(chat)
    assert [e.scope for e in _ends(recorded)] == ["end:0", "end:1", "end:2"]
    result = await run_replay(build_stores(data), chat, tmp_path / "replay")
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]


def test_the_http_route_records_the_flush_and_it_replays(tmp_path: Path):
    """Through the real app: a lesson over the WebSocket, then the classroom's End session."""
    client = make_client(tmp_path, OfflineTutor())
    with client:
        chat = client.post("/api/chats").json()["id"]
        with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
            ws.receive_text(timeout=5)
            ws.send_text('{"type": "user_message", "text": "teach me photosynthesis"}')
            until_finished(ws)
            question = client.get(f"/api/chats/{chat}").json()["pending_question"]
            option = question["question"]["options"][0]["id"]
            frame = {"type": "answer", "tool_call_id": question["tool_call_id"], "answer": option}
            ws.send_text(msgspec.json.encode(frame).decode())
            until_finished(ws)
            accepted = client.post(f"/api/chats/{chat}/extract")
            assert accepted.status_code == 202 and accepted.json()["started"] is True
            for _ in range(500):  # the run is in the background: until it is recorded
                events = anyio.run(build_stores(tmp_path / "data").traces.read, chat)
                if _extractions(events):
                    break
                anyio.run(anyio.sleep, 0.01)
        assert client.post("/api/chats/nope/extract").status_code == 404
    stores = build_stores(tmp_path / "data")
    result = anyio.run(lambda: run_replay(stores, chat, tmp_path / "replay"))
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    recorded = anyio.run(stores.traces.read, chat)
    assert [e.scope for e in _ends(recorded)] == ["end:0"] and _extractions(recorded)
    assert not _ends(anyio.run(stores.traces.read, "nope"))


async def test_the_recorder_forgets_an_ended_chat_but_never_one_mid_request(tmp_path: Path):
    """`sweep` keeps an ended chat's numbering while its request runs (no later request is
    named as it) and forgets it after; the chat that comes back numbers from `end:0` again
    and still replays identically (one unit, its requests in recorded order)."""
    data = tmp_path / "data"
    settings = Settings(data_dir=data)
    stores = build_stores(data)
    tracer = recording_tracer(stores, settings)
    async with recorded_services(settings, OfflineTutor(), stores, tracer) as services:
        chat = (await services.chats.create_record()).id
        socket = services.hub.connect(chat)
        await receive(services, socket, frame("user_message", text="teach me fractions"))
        await settle(services, chat)
        await receive(services, socket, learner_frame(await stores.chats.get(chat), "right"))
        await settle(services, chat)
        services.hub.disconnect(socket)
        async with tracer.session_end(chat):  # `Services.end_session`, swept mid-way
            assert await tracer.sweep() == 0  # mid-request: kept
            await services.extraction.flush(chat)
        await settle(services, chat)
        assert await tracer.sweep() == 1 and tracer.chat_entries() == 0
        await end_session(services, chat)
        await settle(services, chat)
        await tracer.flush(chat)
    recorded = await stores.traces.read(chat)
    assert [e.scope for e in _ends(recorded)] == ["end:0", "end:0"]
    result = await run_replay(stores, chat, tmp_path / "replay", stall_s=2.0)
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
