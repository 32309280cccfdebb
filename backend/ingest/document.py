"""One uploaded file → a material's kind, title, pages and chunks, or `MaterialRejected`."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePath

from backend.core.errors import MaterialRejected
from backend.ingest.chunking import chunk_pages, plain_heading
from backend.ingest.pdf import read_pdf
from backend.ingest.sniff import decode_text, sniff
from backend.ingest.text import clean_text
from shared_contracts.ingest import IngestStage
from shared_contracts.materials import Material, MaterialKind, MaterialText

Progress = Callable[[IngestStage, int, int], None]
"""Called as work goes on with (stage, pages done, pages in all)."""

TITLE_MAX_CHARS = 120
_H1 = re.compile(r"^ {0,3}#[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Ingested:
    kind: MaterialKind
    title: str
    text: MaterialText

    def as_material(
        self, material_id: str, data: bytes, *, filename: str = "", created_at: datetime
    ) -> Material:
        """The record of this document, read from `data` (the one place it is built)."""
        return Material(
            id=material_id,
            title=self.title,
            kind=self.kind,
            pages=len(self.text.pages),
            chunks=len(self.text.chunks),
            filename=filename,
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            created_at=created_at,
        )


def read_document(
    data: bytes, filename: str = "", *, max_bytes: int, progress: Progress | None = None
) -> Ingested:
    """Read an upload whole; `MaterialRejected` says why it cannot become a material."""
    if len(data) > max_bytes:
        raise too_large(max_bytes)
    kind = sniff(data, filename)
    pdf_title = ""
    if kind == "pdf":
        pdf = read_pdf(
            data, (lambda done, total: progress("reading", done, total)) if progress else None
        )
        pages, pdf_title = pdf.pages, pdf.title
    else:
        decoded = decode_text(data)
        assert decoded is not None  # sniff said it is text
        pages = clean_text(decoded).split("\f")
    if progress is not None:
        progress("indexing", len(pages), len(pages))
    chunks = chunk_pages(pages, kind)
    if not chunks:
        raise MaterialRejected("empty", "The file holds no readable text.")
    title = _title(kind, pages, pdf_title, filename)
    return Ingested(kind=kind, title=title, text=MaterialText(pages=pages, chunks=chunks))


def too_large(max_bytes: int) -> MaterialRejected:
    return MaterialRejected(
        "too_large", f"The file is larger than the limit of {max_bytes / 1_000_000:g} MB."
    )


def _title(kind: MaterialKind, pages: list[str], pdf_title: str, filename: str) -> str:
    """The first `# Heading` of Markdown, a PDF's own title, the file's name, or its first
    line, whichever comes first."""
    candidates = [pdf_title]
    if kind == "markdown":
        h1 = _H1.search(pages[0])
        candidates.insert(0, plain_heading(h1.group(1)) if h1 else "")
    stem = PurePath(filename).stem
    candidates.append(" ".join(re.sub(r"[_]+", " ", stem).split()))
    first_line = next((line for p in pages for line in p.splitlines() if line.strip()), "")
    candidates.append(first_line)
    title = next((" ".join(c.split()) for c in candidates if c.strip()), "Untitled")
    return title if len(title) <= TITLE_MAX_CHARS else title[: TITLE_MAX_CHARS - 1] + "…"
