"""The learner's materials as the UI shows them: list rows, upload progress in words, and
the first message of a lesson from one. Plain Python (no Reflex), tested as such."""

from __future__ import annotations

import dataclasses

from shared_contracts.ingest import IngestProgress
from shared_contracts.materials import Material

KIND_LABELS = {"pdf": "PDF", "markdown": "Markdown", "text": "Text"}
MAX_UPLOAD_MB = 20
"""What the picker says the limit is (the API's default; the API has the last word)."""


@dataclasses.dataclass
class MaterialRow:
    id: str = ""
    title: str = ""
    detail: str = ""
    """ "PDF · 12 pages · added 2026-12-01"."""


def material_rows(materials: list[Material]) -> list[MaterialRow]:
    """Materials newest first, as list rows."""
    return [
        MaterialRow(id=m.id, title=m.title or m.filename or "Untitled", detail=detail(m))
        for m in materials
    ]


def detail(material: Material) -> str:
    pages = "1 page" if material.pages == 1 else f"{material.pages} pages"
    parts = [KIND_LABELS.get(material.kind, material.kind), pages]
    if material.created_at is not None:
        parts.append("added " + material.created_at.strftime("%Y-%m-%d"))
    return " · ".join(parts)


def sending_text(percent: float) -> str:
    return f"Sending the file… {percent:.0f} %"


def progress_text(progress: IngestProgress) -> str:
    """How far the server has got, in words."""
    if progress.stage == "reading" and progress.pages_total:
        return f"Reading page {progress.pages_done} of {progress.pages_total}…"
    if progress.stage == "indexing":
        return "Making it searchable…"
    if progress.stage == "done":
        return "Done."
    if progress.stage == "failed":
        return progress.error or "The file could not be read."
    return "Reading the file…"


def progress_percent(progress: IngestProgress) -> int:
    """0–100 for the bar: reading is most of the work, indexing the last tenth."""
    if progress.stage == "reading" and progress.pages_total:
        return int(90 * progress.pages_done / progress.pages_total)
    if progress.stage in ("indexing", "done"):
        return 95 if progress.stage == "indexing" else 100
    return 0


def added_text(material: Material) -> str:
    pages = "1 page" if material.pages == 1 else f"{material.pages} pages"
    return f"Added “{material.title}” ({pages}). Start a lesson from it, or ask the tutor about it."


def refused_text(detail: str, status: int) -> str:
    """The API's reason for refusing a file, as the learner reads it."""
    if status == 413:
        return detail or f"The file is larger than the limit of {MAX_UPLOAD_MB} MB."
    return detail or "The file could not be read."


def lesson_ask(title: str) -> str:
    """The learner's first message of a lesson from a material."""
    return f"Teach me “{title}”."


def lesson_title(title: str) -> str:
    short = " ".join(title.split())
    return "Lesson: " + (short if len(short) <= 60 else short[:59] + "…")
