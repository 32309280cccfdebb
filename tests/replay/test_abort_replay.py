"""A session whose learner aborted a turn mid-stream replays strictly (issue 7)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from backend.replay.runner import run_replay
from backend.server.stores import build_stores
from shared_contracts.chat import TextPart
from shared_contracts.frames import TurnFinished
from shared_contracts.trace import ModelCallEvent, OutboundFrameEvent
from shared_contracts.trace_blobs import expand_blobs
from tests.replay.abort_session import record_abort_session

FRAME = msgspec.json.Decoder(TurnFinished)


def _finished(events) -> list[str]:
    out = []
    for e in events:
        if isinstance(e, OutboundFrameEvent) and '"turn_finished"' in e.frame:
            out.append(FRAME.decode(e.frame).reason)
    return out


async def test_an_aborted_turn_replays_identically_with_its_partial_text(tmp_path: Path):
    data = tmp_path / "data"
    chat = await record_abort_session(data)
    stores = build_stores(data)
    recorded = expand_blobs(await stores.traces.read(chat))
    assert _finished(recorded) == ["aborted", "stop"]
    cut = next(e for e in recorded if isinstance(e, ModelCallEvent) and e.key == "turn:1/teacher#0")
    assert cut.response is None and 3 <= len(cut.chunks) < 200
    record = await stores.chats.get(chat)
    partial = "".join(c.text for c in cut.chunks)
    assert TextPart(text=partial) in record.messages[1].parts  # the partial text is kept
    result = await run_replay(stores, chat, tmp_path / "replay")
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    assert result.checkpoints == 2
    assert _finished(result.events) == ["aborted", "stop"]
