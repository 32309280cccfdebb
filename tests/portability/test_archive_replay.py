"""The round trip's strongest check: a session restored from an archive replays strictly,
exactly as it does from the data dir it was recorded in."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from backend.replay.runner import run_replay
from backend.server.stores import build_stores
from tests.portability.helpers import GOLDENS, export_bytes, golden_copy, import_bytes


@pytest.mark.parametrize("golden", GOLDENS)
def test_every_restored_session_replays_identically(golden: str, tmp_path: Path):
    archive = export_bytes(golden_copy(golden, tmp_path / "source"))
    import_bytes(archive, tmp_path / "restored")

    async def replay_all() -> int:
        stores = build_stores(tmp_path / "restored")
        summaries = await stores.chats.list_summaries()
        for summary in summaries:
            result = await run_replay(stores, summary.id, tmp_path / f"replay-{summary.id}")
            assert result.ok, result.divergence.render()  # type: ignore[union-attr]
            assert result.checkpoints >= 5
        return len(summaries)

    assert anyio.run(replay_all) == 1
