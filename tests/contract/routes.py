"""The HTTP routes of ../shared/PROTOCOL.md, in ONE place: the OpenAPI test and the
Schemathesis run both read this list."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Route:
    """One documented operation: `success` is the 2xx code, `errors` the 4xx codes it can
    answer (ids: 400 malformed, 404 unknown), `body` the success body's component name."""

    method: str
    path: str
    success: int
    errors: frozenset[int] = frozenset()
    body: str | None = None
    array: bool = False
    query: bool = False
    """It takes query parameters (which a request can get wrong)."""

    @property
    def has_inputs(self) -> bool:
        """Whether a request can be malformed at all (a path id, a query or a body)."""
        return "{" in self.path or self.method == "POST" or self.query


ID_ERRORS = frozenset({400, 404})

PROTOCOL_ROUTES: tuple[Route, ...] = (
    Route("GET", "/healthz", 200, body="Health"),
    Route("POST", "/api/chats", 201, ID_ERRORS, body="ChatSummary"),
    Route("GET", "/api/chats", 200, body="ChatSummary", array=True),
    Route("GET", "/api/chats/{chat_id}", 200, ID_ERRORS, body="ChatView"),
    Route("POST", "/api/chats/{chat_id}/extract", 202, ID_ERRORS, body="ExtractAccepted"),
    Route("GET", "/api/graph", 200, frozenset({400}), body="GraphSnapshot"),
    Route("GET", "/api/graph/context", 200, body="GraphContext"),
    Route("GET", "/api/review", 200, frozenset({400}), body="ReviewQueue"),
    Route("GET", "/api/calibration", 200, frozenset({400}), body="Calibration"),
    Route("GET", "/api/jobs/{job_id}", 200, ID_ERRORS, body="Job"),
    Route("GET", "/api/chats/{chat_id}/trace", 200, ID_ERRORS),
    Route("GET", "/api/export", 200, frozenset({400}), query=True),  # a zip: no JSON body
    Route("POST", "/api/materials", 201, frozenset({400, 413, 415, 422}), body="Material"),
    Route("GET", "/api/materials", 200, body="Material", array=True),
    Route("GET", "/api/materials/search", 200, frozenset({400}), body="SearchHits", query=True),
    Route("GET", "/api/materials/uploads/{upload_id}", 200, ID_ERRORS, body="IngestProgress"),
    Route("DELETE", "/api/materials/{material_id}", 204, ID_ERRORS),
)
"""`GET /schema/openapi.json` serves the document itself and is checked separately; the
WebSocket is not an OpenAPI operation (tests/contract/test_ws_frames.py covers it)."""

OPENAPI_PATH = "/schema/openapi.json"
