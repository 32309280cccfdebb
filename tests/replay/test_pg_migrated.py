"""Moved over to PostgreSQL, nothing changes: the derived graph `GET /api/graph` answers
and every recorded session's replay are those of the files they were copied from."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime

import pytest
from litestar.testing import TestClient

from backend.replay.runner import run_replay
from backend.server.app import create_app
from backend.server.settings import Settings
from backend.server.stores import build_stores, migrate_into_database, open_local_stores
from tests.fakes import ScriptedModel
from tests.golden.test_goldens import GOLDENS
from tests.server.test_learner_routes import StillClock


def graph_answers(settings: Settings) -> list[object]:
    """What the app answers for the graph and its teacher context block, as of one moment
    (a read is as of the app's clock)."""
    clock = StillClock(datetime(2026, 6, 1, tzinfo=UTC))
    with TestClient(app=create_app(settings, model=ScriptedModel([]), clock=clock)) as client:
        return [client.get(path).json() for path in ("/api/graph", "/api/graph/context")]


@pytest.mark.parametrize("golden", GOLDENS, ids=[p.name for p in GOLDENS])
async def test_a_moved_data_dir_derives_and_replays_as_its_files(golden, pg_cluster, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(golden, data)
    url = pg_cluster.create_database()
    await migrate_into_database(data, url)
    (trace,) = (data / "traces").glob("*.jsonl")
    chat_id = trace.stem

    files = await run_replay(build_stores(data), chat_id, tmp_path / "replay-files")
    async with open_local_stores(tmp_path / "unused", url) as moved:
        replayed = await run_replay(moved, chat_id, tmp_path / "replay-pg")
    assert replayed.ok, replayed.divergence.render()  # type: ignore[union-attr]
    assert (replayed.compared, replayed.frames, replayed.checkpoints) == (
        files.compared,
        files.frames,
        files.checkpoints,
    )
    on_files = graph_answers(Settings(data_dir=data))
    on_pg = graph_answers(Settings(data_dir=tmp_path / "empty", database_url=url))
    assert on_pg == on_files
    assert on_files[0]["nodes"]  # type: ignore[index]  # a graph worth comparing
    assert not (tmp_path / "empty" / "chats").exists()  # the PostgreSQL app kept nothing in files
