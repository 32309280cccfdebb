"""The materials' plain views: rows, progress in words, refusals, the lesson's first message,
and a material passage named as such in a node's details."""

from __future__ import annotations

from datetime import UTC, datetime

from shared_contracts.graph import Evidence
from shared_contracts.ingest import IngestProgress
from shared_contracts.materials import Material
from ui.model import materials_view as view
from ui.model.graph_view import who_said


def test_rows_say_kind_pages_and_when() -> None:
    material = Material(
        id="mat-1",
        title="Plants",
        kind="pdf",
        pages=12,
        chunks=40,
        created_at=datetime(2026, 12, 1, tzinfo=UTC),
    )
    (row,) = view.material_rows([material])
    assert (row.id, row.title, row.detail) == (
        "mat-1",
        "Plants",
        "PDF · 12 pages · added 2026-12-01",
    )
    one = Material(id="mat-2", title="", filename="n.md", kind="markdown", pages=1, chunks=1)
    assert view.material_rows([one])[0].title == "n.md"
    assert view.material_rows([one])[0].detail == "Markdown · 1 page"


def test_progress_in_words_and_as_a_bar() -> None:
    reading = IngestProgress(upload_id="up-1", stage="reading", pages_done=120, pages_total=800)
    assert view.progress_text(reading) == "Reading page 120 of 800…"
    assert view.progress_percent(reading) == 13
    indexing = IngestProgress(upload_id="up-1", stage="indexing", pages_done=8, pages_total=8)
    assert view.progress_text(indexing) == "Making it searchable…"
    failed = IngestProgress(upload_id="up-1", stage="failed", error="The PDF is encrypted.")
    assert view.progress_text(failed) == "The PDF is encrypted."
    assert view.sending_text(42.4) == "Sending the file… 42 %"


def test_refusals_and_the_first_lesson_message() -> None:
    assert view.refused_text("", 413) == "The file is larger than the limit of 20 MB."
    assert view.refused_text("The PDF has no text layer.", 422) == "The PDF has no text layer."
    assert view.lesson_ask("Plants") == "Teach me “Plants”."
    assert view.lesson_title("x" * 80).endswith("…") and len(view.lesson_title("x" * 80)) == 68


def test_a_material_passage_names_its_page() -> None:
    passage = Evidence(
        quote="q", message_id="m1", turn=1, speaker="material", start=0, end=1, page=7
    )
    assert who_said(passage) == "From your material, page 7"
    said = Evidence(quote="q", message_id="m1", turn=1, speaker="learner", start=0, end=1)
    assert who_said(said) == "You said"
