"""A learner's own material: uploaded documents, their text and chunks, and search hits.

A document's text is untrusted input: it is stored and quoted as data, never rendered as
HTML and never read as instructions.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec

from shared_contracts.base import Body, Id, Inbound, Record

MaterialKind = Literal["pdf", "markdown", "text"]


class Material(Record, kw_only=True, frozen=True):
    """One uploaded document, as listed and as returned by `POST /api/materials`."""

    id: Id
    title: str
    kind: MaterialKind
    pages: int
    """PDF pages; a Markdown or text file is one page unless it has form feeds."""
    chunks: int
    filename: str = ""
    size: int = 0
    """Bytes of the uploaded file."""
    sha256: str = ""
    created_at: datetime | None = None


class Chunk(Record, kw_only=True, frozen=True):
    """A paragraph-sized piece of one page: `text` is exactly `page_text[start:end]`."""

    page: int
    """1-based."""
    start: int
    end: int
    text: str
    heading: str = ""
    """The section it belongs to ("" before the first heading)."""
    level: int = 0
    """The heading's depth (1 = top level); 0 with no heading."""


class MaterialText(Record, kw_only=True, frozen=True):
    """What a document's text is, as stored: its pages and its chunks (in reading order)."""

    pages: list[str] = msgspec.field(default_factory=list)
    chunks: list[Chunk] = msgspec.field(default_factory=list)


class MaterialHit(Body, kw_only=True, frozen=True):
    """One search result: a chunk of a material, ranked by BM25 (higher is better)."""

    material_id: Id
    page: int
    text: str
    score: float
    title: str = ""
    """The material's title."""
    heading: str = ""


class SearchHits(Body, kw_only=True, frozen=True):
    hits: list[MaterialHit] = msgspec.field(default_factory=list)


class Passage(Record, kw_only=True, frozen=True):
    """A quote of a learner's material, checked verbatim against its stored page text:
    `quote` is the stored text itself (never the model's copy of it)."""

    material_id: Id
    page: int
    quote: str
    title: str = ""
    start: int = 0
    end: int = 0
    """The quote's span of the page's stored text."""


class PassageSpec(Inbound, kw_only=True, frozen=True):
    """A passage a model cites: checked against the material before it is kept."""

    page: Annotated[int, msgspec.Meta(ge=1)]
    quote: Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]
    material_id: Id | None = None
    """Which material (default: the one the session was started on)."""
