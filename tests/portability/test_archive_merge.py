"""`import --merge`: the graph merger's rules, idempotent, conflicts before any write."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from backend.agent.extraction.channels import GraphReader
from backend.core.errors import ImportConflict
from backend.server.stores import build_stores, verify
from tests.portability.helpers import (
    add_material,
    digest,
    export_bytes,
    golden_copy,
    import_bytes,
    renamed,
)


def _snapshot(data_dir: Path):
    return anyio.run(GraphReader(build_stores(data_dir).graph).snapshot)


def test_importing_the_same_archive_twice_changes_nothing_the_second_time(tmp_path: Path):
    archive = export_bytes(golden_copy("lesson_end_session", tmp_path / "source"))
    target = tmp_path / "target"
    import_bytes(archive, target)
    restored = digest(target)
    report = import_bytes(archive, target, merge=True)
    assert report.merged and sum(report.written.values()) == 0
    assert digest(target) == restored


def test_a_merge_joins_the_same_propositions_learned_on_two_machines(tmp_path: Path):
    """Both sessions taught fractions: the other machine's nodes are the nodes already
    here (same statements), so their probes and sessions join them; nothing duplicates."""
    target = golden_copy("lesson_end_session", tmp_path / "target")
    before = _snapshot(target)
    other = renamed(export_bytes(golden_copy("job_and_extraction", tmp_path / "other")))
    report = import_bytes(other, target, merge=True)
    assert report.written["chats"] == 1 and report.written["jobs"] == 3
    assert report.written["propositions"] == 0  # all three matched by statement
    after = _snapshot(target)
    assert [n.statement for n in after.nodes] == [n.statement for n in before.nodes]
    fraction = next(n for n in after.nodes if n.statement.startswith("What a fraction"))
    assert fraction.sessions == ["chat-0001", "chat-b0001"]
    assert fraction.correct + fraction.incorrect > next(
        n.correct + n.incorrect for n in before.nodes if n.id == fraction.id
    )
    assert {s.chat_id for s in after.sessions} == {"chat-0001", "chat-b0001"}
    assert verify(target) == []
    merged = digest(target)
    again = import_bytes(other, target, merge=True)
    assert sum(again.written.values()) == 0
    assert digest(target) == merged


def test_a_merge_appends_what_is_new_and_keeps_what_is_there(tmp_path: Path):
    target = golden_copy("lesson_python_lists", tmp_path / "target")
    ledgers = {p.name: p.read_bytes() for p in (target / "graph").iterdir()}
    other = renamed(export_bytes(golden_copy("wrong_answer_reteach", tmp_path / "other")))
    report = import_bytes(other, target, merge=True)
    assert report.written["propositions"] == 4  # photosynthesis shares nothing with lists
    for name, before in ledgers.items():
        assert (target / "graph" / name).read_bytes().startswith(before)  # appended only
    after = _snapshot(target)
    assert len(after.nodes) == 8
    assert any(n.kind == "misconception" for n in after.nodes)


def test_the_same_chat_id_with_different_content_is_a_conflict(tmp_path: Path):
    archive = export_bytes(golden_copy("lesson_python_lists", tmp_path / "a"))
    target = golden_copy("wrong_answer_reteach", tmp_path / "b")
    before = digest(target)
    with pytest.raises(ImportConflict, match="chat 'chat-0001' is in the data dir and in the"):
        import_bytes(archive, target, merge=True)
    assert digest(target) == before


def test_a_material_is_kept_once_and_a_different_one_with_its_id_is_a_conflict(tmp_path: Path):
    source = golden_copy("lesson_python_lists", tmp_path / "source")
    add_material(source)
    archive = export_bytes(source)
    target = golden_copy("wrong_answer_reteach", tmp_path / "target")
    add_material(target)  # the same upload, already here
    report = import_bytes(renamed(archive, b"c"), target, merge=True)
    assert report.written["materials"] == 1  # mat-c0001: the archive's, under its own id
    other = golden_copy("wrong_answer_reteach", tmp_path / "other")
    add_material(other, "mat-c0001", b"# Something else entirely\n\nNot fractions at all.\n")
    before = digest(other)
    with pytest.raises(ImportConflict, match="material 'mat-c0001'"):
        import_bytes(renamed(archive, b"c"), other, merge=True)
    assert digest(other) == before
