"""An upload's way through ingestion, as `GET /api/materials/uploads/{upload_id}` reports it:
its stage, pages read so far, and the material it became or the typed reason it failed."""

from __future__ import annotations

from typing import Literal

from shared_contracts.base import Body, Id
from shared_contracts.materials import Material

IngestStage = Literal["receiving", "reading", "indexing", "done", "failed"]
IngestErrorCode = Literal[
    "too_large", "unsupported_type", "mismatch", "encrypted", "no_text", "empty", "unreadable"
]


class IngestProgress(Body, kw_only=True, frozen=True):
    """How far an upload has got (`GET /api/materials/uploads/{upload_id}`)."""

    upload_id: Id
    stage: IngestStage
    pages_done: int = 0
    pages_total: int = 0
    material: Material | None = None
    error: str = ""
    code: IngestErrorCode | None = None
