"""The app freezes its start-up heap while it serves and unfreezes it at shutdown."""

from __future__ import annotations

import gc
from pathlib import Path

from litestar.testing import TestClient

from backend.server.app import create_app
from backend.server.runtime import startup_heap_frozen
from backend.server.settings import Settings
from tests.fakes import ScriptedModel


def test_a_serving_app_keeps_its_start_up_objects_out_of_collections(tmp_path: Path):
    assert gc.get_freeze_count() == 0
    app = create_app(Settings(data_dir=tmp_path / "data"), model=ScriptedModel([]))
    with TestClient(app=app) as client:
        assert client.get("/api/chats").status_code == 200
        frozen = gc.get_freeze_count()
        assert frozen > 10_000  # imports, routes and services, not just a few objects
        scanned = {id(o) for o in gc.get_objects()}
        assert id(app) not in scanned and id(app.state) not in scanned
    assert gc.get_freeze_count() == 0


def test_objects_made_while_serving_stay_collectable():
    with startup_heap_frozen():
        made = [[] for _ in range(3)]
        made[0].append(made)  # a cycle made after start-up
        tracked = {id(o) for o in gc.get_objects()}
        assert id(made) in tracked  # still in a generation a collection scans
    assert gc.get_freeze_count() == 0
