"""`GET /api/export` end to end: the archive a running app hands out is imported with
`harness import` into a fresh data dir, and an app there answers `GET /api/graph` and the
chats exactly as the first, `harness verify` is clean and every session replays strictly;
the deck and the notes come from the same route."""

from __future__ import annotations

import io
import sqlite3
import zipfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import anyio
import pytest
from litestar.testing import TestClient

from backend.cli import main
from backend.replay.runner import run_replay
from backend.server.app import create_app
from backend.server.settings import Settings
from backend.server.stores import build_stores
from tests.fakes import FixedClock
from tests.portability.helpers import add_material, digest, golden_copy, manifest_of, members

GOLDEN = "wrong_answer_reteach"


@contextmanager
def app_on(data_dir: Path) -> Iterator[TestClient]:  # type: ignore[type-arg]
    app = create_app(Settings(data_dir=data_dir), clock=FixedClock())
    with TestClient(app=app) as client:
        yield client


def _what_a_learner_sees(client: TestClient) -> tuple[object, ...]:  # type: ignore[type-arg]
    chats = client.get("/api/chats").json()
    views = [client.get(f"/api/chats/{chat['id']}").json() for chat in chats]
    return client.get("/api/graph").json(), client.get("/api/graph/context").json(), views


@pytest.fixture
def learner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("LH_MODEL", "LH_DATABASE_URL", "LH_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    source = golden_copy(GOLDEN, tmp_path / "source")
    add_material(source)
    return source


def test_the_downloaded_archive_restores_what_the_learner_sees(
    learner: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    with app_on(learner) as client:
        response = client.get("/api/export")
        seen = _what_a_learner_sees(client)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/zip"
    assert response.headers["content-disposition"] == (
        'attachment; filename="learning-harness-2026-01-01.zip"'
    )
    manifest = manifest_of(response.content)
    assert manifest.traces and manifest.counts["materials"] == 1
    archive = tmp_path / "download.zip"
    archive.write_bytes(response.content)

    restored = tmp_path / "restored"
    monkeypatch.setenv("LH_DATA_DIR", str(restored))
    assert main(["import", str(archive)]) == 0
    assert "imported into" in capsys.readouterr().out
    assert main(["verify"]) == 0
    with app_on(restored) as client:
        assert _what_a_learner_sees(client) == seen

    async def replay_all() -> list[str]:
        stores = build_stores(restored)
        ids = [s.id for s in await stores.chats.list_summaries()]
        for chat_id in ids:
            result = await run_replay(stores, chat_id, tmp_path / f"replay-{chat_id}")
            assert result.ok, result.divergence.render()  # type: ignore[union-attr]
        return ids

    assert len(anyio.run(replay_all)) == 1


def test_the_route_and_the_command_write_the_same_archive(
    learner: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Traces as stored (texts interned), not as the trace route expands them."""
    with app_on(learner) as client:
        downloaded = members(client.get("/api/export").content)
    monkeypatch.setenv("LH_DATA_DIR", str(learner))
    assert main(["export", "--out", str(tmp_path / "cli.zip")]) == 0
    written = members((tmp_path / "cli.zip").read_bytes())
    del downloaded["manifest.json"], written["manifest.json"]  # their created_at differ
    assert downloaded == written


def test_an_archive_without_traces(learner: Path):
    with app_on(learner) as client:
        archive = client.get("/api/export", params={"traces": "false"}).content
    manifest = manifest_of(archive)
    assert manifest.traces is False and manifest.counts["traces"] == 0
    assert not [name for name in members(archive) if name.startswith("traces/")]


def test_the_deck_and_the_notes_come_from_the_same_route(learner: Path, tmp_path: Path):
    with app_on(learner) as client:
        nodes = len(client.get("/api/graph").json()["nodes"])
        deck = client.get("/api/export", params={"format": "anki"})
        notes = client.get("/api/export", params={"format": "markdown"})
    assert deck.headers["content-disposition"].endswith(
        'filename="learning-harness-2026-01-01.apkg"'
    )
    with zipfile.ZipFile(io.BytesIO(deck.content)) as apkg:
        (tmp_path / "collection.anki2").write_bytes(apkg.read("collection.anki2"))
    with closing(sqlite3.connect(tmp_path / "collection.anki2")) as db:
        assert db.execute("SELECT count(*) FROM notes").fetchone() == (nodes,)
    assert notes.headers["content-disposition"].endswith(
        'filename="learning-harness-notes-2026-01-01.zip"'
    )
    with zipfile.ZipFile(io.BytesIO(notes.content)) as vault:
        names = vault.namelist()
    assert "Learning Harness/Index.md" in names
    assert len([n for n in names if n.startswith("Learning Harness/Nodes/")]) == nodes


@pytest.mark.parametrize("query", [{"format": "pdf"}, {"traces": "maybe"}])
def test_a_bad_query_is_a_400_with_a_reason_and_changes_nothing(learner: Path, query):
    before = digest(learner)
    with app_on(learner) as client:
        response = client.get("/api/export", params=query)
    assert response.status_code == 400
    assert response.json()["detail"].startswith("Validation failed for GET /api/export")
    assert digest(learner) == before
