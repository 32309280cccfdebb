"""Export → import into a fresh data dir restores the learner's whole history."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from backend.agent.extraction.channels import GraphReader
from backend.core.errors import ImportRefused
from backend.portability.archive import load_learner
from backend.server.stores import build_stores, verify
from tests.portability.helpers import (
    GOLDENS,
    add_material,
    digest,
    export_bytes,
    golden_copy,
    import_bytes,
    manifest_of,
    members,
)


def _snapshot(data_dir: Path):
    return anyio.run(GraphReader(build_stores(data_dir).graph).snapshot)


def _everything(data_dir: Path):
    return anyio.run(load_learner, build_stores(data_dir))


@pytest.mark.parametrize("golden", GOLDENS)
def test_an_archive_restores_every_record_into_an_empty_data_dir(tmp_path: Path, golden: str):
    source = golden_copy(golden, tmp_path / "source")
    archive = export_bytes(source)
    report = import_bytes(archive, tmp_path / "restored")
    assert not report.merged
    assert report.written == report.read
    restored = tmp_path / "restored"
    assert _everything(restored) == _everything(source)
    assert _snapshot(restored) == _snapshot(source)
    assert verify(restored) == []
    # the ledgers come back line for line, byte for byte
    for ledger in (source / "graph").iterdir():
        assert (restored / "graph" / ledger.name).read_bytes() == ledger.read_bytes()


def test_materials_come_back_whole_and_searchable(tmp_path: Path):
    source = golden_copy("lesson_python_lists", tmp_path / "source")
    add_material(source)
    archive = export_bytes(source)
    names = [m.name for m in manifest_of(archive).members]
    assert names[-3:] == [
        "materials.jsonl",
        "materials/mat-0001/text.json",
        "materials/mat-0001/original",
    ]
    import_bytes(archive, tmp_path / "restored")
    restored = build_stores(tmp_path / "restored").materials
    assert _everything(tmp_path / "restored") == _everything(source)
    assert (
        anyio.run(restored.original, "mat-0001")
        == (source / "materials/mat-0001/original.md").read_bytes()
    )
    hits = anyio.run(restored.search, "add the numerators")
    assert hits and hits[0].material_id == "mat-0001"  # the index is rebuilt on import
    assert verify(tmp_path / "restored") == []


def test_the_manifest_counts_every_kind_and_lists_every_member(tmp_path: Path):
    source = golden_copy("job_and_extraction", tmp_path / "source")
    archive = export_bytes(source)
    manifest = manifest_of(archive)
    assert manifest.format == "learning-harness-archive" and manifest.version == 1
    assert manifest.traces is True
    assert manifest.counts["chats"] == 1 and manifest.counts["jobs"] == 3
    assert manifest.counts["propositions"] == len(
        (source / "graph/propositions.jsonl").read_bytes().splitlines()
    )
    assert manifest.counts["traces"] == 1 and manifest.counts["trace_events"] > 100
    names = [m.name for m in manifest.members]
    assert names[:2] == ["chats.jsonl", "jobs.jsonl"]
    assert "traces/chat-0001.jsonl" in names
    assert set(members(archive)) == {"manifest.json", *names}


def test_an_archive_without_traces_restores_everything_else(tmp_path: Path):
    source = golden_copy("lesson_python_lists", tmp_path / "source")
    archive = export_bytes(source, traces=False)
    assert manifest_of(archive).traces is False
    assert not any(name.startswith("traces/") for name in members(archive))
    import_bytes(archive, tmp_path / "restored")
    restored = _everything(tmp_path / "restored")
    assert restored.traces == {}
    assert restored.chats == _everything(source).chats


def test_the_same_data_exports_the_same_bytes(tmp_path: Path):
    source = golden_copy("lesson_python_lists", tmp_path / "source")
    assert export_bytes(source) == export_bytes(source)


def test_an_empty_data_dir_exports_an_archive_that_imports(tmp_path: Path):
    archive = export_bytes(tmp_path / "empty")
    assert manifest_of(archive).counts["chats"] == 0
    report = import_bytes(archive, tmp_path / "restored")
    assert sum(report.written.values()) == 0


def test_importing_into_a_data_dir_with_data_is_refused_unless_merging(tmp_path: Path):
    archive = export_bytes(golden_copy("lesson_python_lists", tmp_path / "a"))
    target = golden_copy("wrong_answer_reteach", tmp_path / "b")
    before = digest(target)
    with pytest.raises(ImportRefused, match=r"1 chat, 2 jobs, \d+ nodes.*--merge"):
        import_bytes(archive, target)
    assert digest(target) == before


def test_the_archive_carries_every_ledger_the_store_writes(tmp_path: Path):
    from backend.core.portability.layout import LEDGERS
    from backend.core.ports import LEDGERS as STORED

    source = golden_copy("job_and_extraction", tmp_path / "source")
    written = {p.relative_to(source).as_posix() for p in (source / "graph").glob("*.jsonl")}
    assert len(written) >= 3
    assert written <= set(members(export_bytes(source)))
    assert STORED == LEDGERS
