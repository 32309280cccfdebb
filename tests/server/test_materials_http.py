"""`/api/materials` over HTTP: upload (type from the bytes, a size limit, clear refusals with
nothing stored), list, search, progress, removal, and a chat started on a material."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import ScriptedModel
from tests.materials.pdf_writer import encrypted, make_pdf, text_pdf
from tests.materials.samples import PLANTS_MD


def _upload(client, data: bytes, name: str, **params):
    return client.post("/api/materials", files={"file": (name, data)}, params=params)


def _stored_files(data_dir: Path) -> list[Path]:
    root = data_dir / "materials"
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_upload_list_search_remove(client_factory, tmp_path):
    client = client_factory(ScriptedModel([]))
    response = _upload(client, PLANTS_MD, "plants.md", upload_id="up-1")
    assert response.status_code == 201, response.text
    material = response.json()
    assert material["kind"] == "markdown" and material["title"] == "How plants feed themselves"
    assert material["pages"] == 1 and material["chunks"] >= 4
    progress = client.get("/api/materials/uploads/up-1").json()
    assert progress["stage"] == "done" and progress["material"]["id"] == material["id"]

    assert [m["id"] for m in client.get("/api/materials").json()] == [material["id"]]
    hits = client.get("/api/materials/search", params={"q": "stomata carbon dioxide"}).json()
    first = hits["hits"][0]
    assert first["material_id"] == material["id"] and first["page"] == 1
    assert "stomata" in first["text"] and first["score"] > 0

    assert client.delete(f"/api/materials/{material['id']}").status_code == 204
    assert client.get("/api/materials").json() == []
    after = client.get("/api/materials/search", params={"q": "stomata"}).json()
    assert after == {"hits": []}
    assert client.delete(f"/api/materials/{material['id']}").status_code == 404


def test_a_pdf_keeps_its_pages(client_factory):
    client = client_factory(ScriptedModel([]))
    pdf = text_pdf(
        [["The first page talks about leaves."], ["The second page explains xylem vessels."]],
        title="Botany notes",
    )
    material = _upload(client, pdf, "notes.pdf").json()
    assert material["kind"] == "pdf" and material["pages"] == 2
    (hit,) = client.get("/api/materials/search", params={"q": "xylem", "limit": 1}).json()["hits"]
    assert hit["page"] == 2


@pytest.mark.parametrize(
    ("data", "name", "status", "code"),
    [
        (b"", "empty.md", 422, "empty"),
        (encrypted(text_pdf([["A secret page of text."]])), "locked.pdf", 422, "encrypted"),
        (make_pdf([None, None]), "scan.pdf", 422, "no_text"),
        (b"\x89PNG\r\n\x1a\n" + bytes(200), "photo.png", 415, "unsupported_type"),
        (PLANTS_MD, "plants.pdf", 422, "mismatch"),
        (b"%PDF-1.7\nnot really a pdf at all", "broken.pdf", 422, "unreadable"),
    ],
)
def test_bad_files_are_refused_and_nothing_is_stored(
    client_factory, tmp_path, data, name, status, code
):
    client = client_factory(ScriptedModel([]))
    response = _upload(client, data, name, upload_id="up-bad")
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code and body["detail"] and "Traceback" not in body["detail"]
    progress = client.get("/api/materials/uploads/up-bad").json()
    assert progress["stage"] == "failed" and progress["code"] == code
    assert client.get("/api/materials").json() == []
    assert _stored_files(tmp_path / "data") == [] or all(
        p.suffix in {".sqlite3", ".sqlite3-wal", ".sqlite3-shm", ".db"}
        for p in _stored_files(tmp_path / "data")
    )


def test_over_the_size_limit_is_413_before_it_is_read(client_factory):
    client = client_factory(ScriptedModel([]), material_max_mb=1)
    response = _upload(client, b"# Big\n\n" + b"word " * 400_000, "big.md")
    assert response.status_code == 413
    assert response.json()["code"] == "too_large" and "1 MB" in response.json()["detail"]
    assert client.get("/api/materials").json() == []


def test_an_upload_without_a_file_part_is_400(client_factory):
    client = client_factory(ScriptedModel([]))
    response = client.post("/api/materials", files={"document": ("a.md", b"# A\n\ntext")})
    assert response.status_code == 400 and "`file`" in response.json()["detail"]
    assert client.get("/api/materials/uploads/nope").status_code == 404


def test_a_chat_started_on_a_material(client_factory):
    client = client_factory(ScriptedModel([]))
    material = _upload(client, PLANTS_MD, "plants.md").json()
    chat = client.post("/api/chats", json={"material_id": material["id"]}).json()
    assert chat["title"] == "How plants feed themselves"
    assert chat["material_id"] == material["id"]
    assert client.get(f"/api/chats/{chat['id']}").json()["material_id"] == material["id"]
    missing = client.post("/api/chats", json={"material_id": "mat-missing"})
    assert missing.status_code == 404
