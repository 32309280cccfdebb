"""The materials adapter on a temp dir: whole materials or none, search by BM25, removal
drops the index rows, and the index is reconciled with the files at open."""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime

import pytest

from backend.core.errors import AlreadyExists, InvalidId, NotFound, StorageError
from backend.ingest import read_document
from backend.store.errors import DiskError
from backend.store.file_material_store import INDEX_FILE, FileMaterialStore
from backend.store.fileops import OsFileOps
from shared_contracts.materials import Material, MaterialText

LESSON = b"""# Fractions

A fraction names part of a whole. The denominator counts the equal parts.

## Adding

To add fractions with the same denominator, add the numerators and keep the denominator.

## Photosynthesis aside

Plants turn light, water and carbon dioxide into sugar and oxygen.
"""


def _material(material_id: str, data: bytes = LESSON) -> tuple[Material, MaterialText, bytes]:
    doc = read_document(data, "lesson.md", max_bytes=1_000_000)
    material = doc.as_material(material_id, data, created_at=datetime(2026, 1, 1, tzinfo=UTC))
    return material, doc.text, data


async def test_add_list_search_remove(tmp_path):
    store = FileMaterialStore(tmp_path)
    material, text, data = _material("mat-1")
    await store.add(material, text, data)
    assert await store.list_all() == [material]
    assert await store.get("mat-1") == material
    assert (await store.text("mat-1")) == text
    assert (tmp_path / "materials" / "mat-1" / "original.md").read_bytes() == data
    assert await store.original("mat-1") == data

    hits = await store.search("how do I add numerators?")
    assert hits[0].material_id == "mat-1"
    assert "add the numerators" in hits[0].text
    assert hits[0].heading == "Adding"
    assert hits[0].title == "Fractions"
    assert hits[0].page == 1
    assert hits[0].score > 0
    assert await store.page_text("mat-1", 1) == text.pages[0]

    await store.remove("mat-1")
    assert await store.list_all() == []
    assert await store.search("numerators") == []
    assert not (tmp_path / "materials" / "mat-1").exists()
    with pytest.raises(NotFound):
        await store.get("mat-1")
    with pytest.raises(NotFound):
        await store.original("mat-1")
    with pytest.raises(NotFound):
        await store.remove("mat-1")


async def test_search_ranks_by_bm25_and_filters_by_material(tmp_path):
    store = FileMaterialStore(tmp_path)
    await store.add(*_material("mat-a"))
    other = b"# Light\n\nLight and more light: light is what leaves need, light all day.\n"
    await store.add(*_material("mat-b", other))
    unrelated = "\n\n".join(f"Paragraph {i} on numbers and sums." * 30 for i in range(6))
    await store.add(*_material("mat-c", ("# Sums\n\n" + unrelated).encode()))
    hits = await store.search("light")
    assert [h.material_id for h in hits][:2] == ["mat-b", "mat-a"]
    assert hits[0].score > hits[1].score
    only_a = await store.search("light", material_id="mat-a")
    assert {h.material_id for h in only_a} == {"mat-a"}
    assert len(await store.search("light", limit=1)) == 1


@pytest.mark.parametrize(
    "query", ['"', "light OR", "NEAR(a b)", "col:light", "*", "a AND (", "^light", "the of and"]
)
async def test_a_query_is_words_never_fts_syntax(tmp_path, query):
    store = FileMaterialStore(tmp_path)
    await store.add(*_material("mat-1"))
    await store.search(query)  # no syntax error reaches the caller


async def test_an_id_taken_is_refused_and_bad_ids_never_touch_disk(tmp_path):
    store = FileMaterialStore(tmp_path)
    await store.add(*_material("mat-1"))
    with pytest.raises(AlreadyExists):
        await store.add(*_material("mat-1"))
    for bad in ("../x", "A", "", "a/b"):
        with pytest.raises(InvalidId):
            await store.get(bad)
        with pytest.raises(InvalidId):
            await store.remove(bad)


async def test_a_failing_write_leaves_nothing(tmp_path):
    class FullDisk(OsFileOps):
        def fsync(self, fd: int) -> None:
            raise OSError(28, "No space left on device")

    store = FileMaterialStore(tmp_path, FullDisk())
    with pytest.raises(DiskError):
        await store.add(*_material("mat-1"))
    assert await store.list_all() == []
    assert await store.search("fraction") == []
    assert os.listdir(tmp_path / "materials" / ".staging") == []


async def test_a_failing_index_write_removes_the_committed_files(tmp_path):
    store = FileMaterialStore(tmp_path)
    await store.add(*_material("mat-1"))
    store.close()  # every index write now fails
    with pytest.raises(StorageError):
        await store.add(*_material("mat-2"))
    assert not (tmp_path / "materials" / "mat-2").exists()
    assert [m.id for m in await store.list_all()] == ["mat-1"]


async def test_a_data_dir_without_materials_gets_no_files(tmp_path):
    store = FileMaterialStore(tmp_path)
    assert await store.list_all() == []
    assert await store.search("anything") == []
    assert list(tmp_path.iterdir()) == []


async def test_reopen_reconciles_the_index_with_the_files(tmp_path):
    store = FileMaterialStore(tmp_path)
    await store.add(*_material("mat-1"))
    await store.add(*_material("mat-2"))
    store.close()
    # As after a crash between the steps: mat-1 lost its index rows, mat-2 its files.
    index = sqlite3.connect(tmp_path / "materials" / INDEX_FILE)
    with index:
        index.execute("DELETE FROM chunk WHERE material_id = 'mat-1'")
        index.execute("DELETE FROM material WHERE id = 'mat-1'")
    index.close()
    os.rename(tmp_path / "materials" / "mat-2", tmp_path / "materials" / ".removing" / "mat-2")

    reopened = FileMaterialStore(tmp_path)
    assert [m.id for m in await reopened.list_all()] == ["mat-1"]
    assert {h.material_id for h in await reopened.search("fraction denominator")} == {"mat-1"}
    rows = sqlite3.connect(tmp_path / "materials" / INDEX_FILE).execute(
        "SELECT count(*) FROM chunk WHERE material_id = 'mat-2'"
    )
    assert rows.fetchone() == (0,)
    assert os.listdir(tmp_path / "materials" / ".removing") == []


async def test_a_lost_index_is_rebuilt_from_the_files(tmp_path):
    store = FileMaterialStore(tmp_path)
    await store.add(*_material("mat-1"))
    store.close()
    for name in os.listdir(tmp_path / "materials"):
        if name.startswith(INDEX_FILE):
            os.unlink(tmp_path / "materials" / name)
    reopened = FileMaterialStore(tmp_path)
    assert (await reopened.search("photosynthesis"))[0].material_id == "mat-1"


async def test_page_text_of_a_page_that_does_not_exist(tmp_path):
    store = FileMaterialStore(tmp_path)
    await store.add(*_material("mat-1"))
    with pytest.raises(NotFound):
        await store.page_text("mat-1", 2)
    with pytest.raises(NotFound):
        await store.page_text("mat-9", 1)
