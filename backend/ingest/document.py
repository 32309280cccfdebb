"""One uploaded file → a material's kind, title, pages and chunks, or `MaterialRejected`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath

from backend.core.errors import MaterialRejected
from backend.ingest.chunking import chunk_pages, plain_heading
from backend.ingest.pdf import read_pdf
from backend.ingest.sniff import decode_text, sniff
from backend.ingest.text import clean_text
from shared_contracts.materials import IngestStage, MaterialKind, MaterialText

Progress = Callable[[IngestStage, int, int], None]
"""Called as work goes on with (stage, pages done, pages in all)."""

TITLE_MAX_CHARS = 120
_H1 = re.compile(r"^ {0,3}#[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Ingested:
    kind: MaterialKind
    title: str
    text: MaterialText


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
