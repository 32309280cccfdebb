"""HTTP reads and commands against the API, decoded into shared_contracts types."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TypeVar

import httpx
import msgspec

from shared_contracts.accounts import Credentials, SessionToken
from shared_contracts.chat import ChatMode, ChatSummary, ChatView
from shared_contracts.graph import GraphSnapshot
from shared_contracts.http import CreateChat, ErrorBody, ExtractAccepted, Health
from shared_contracts.ingest import IngestProgress
from shared_contracts.jobs import Job
from shared_contracts.learner import Calibration, ReviewQueue
from shared_contracts.materials import Material, SearchHits
from shared_contracts.trace import AnyTraceEvent
from ui.settings import api_url, auth_headers

T = TypeVar("T")

TIMEOUT = httpx.Timeout(10.0, connect=3.0)
_ENCODER = msgspec.json.Encoder()


class ApiError(Exception):
    """The API could not be reached or answered with an error; the message is for people.

    `status` is the HTTP status when the API answered (0 when it could not be reached)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class Refused(ApiError):
    """The API read the request and said no, with a sentence for the learner (`detail`)."""

    def __init__(self, detail: str, status: int) -> None:
        super().__init__(detail, status)
        self.detail = detail


def _client() -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=api_url(), headers=auth_headers(), timeout=TIMEOUT)


async def _request(
    method: str, path: str, body: bytes | None = None, params: dict[str, str] | None = None
) -> bytes:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    try:
        async with _client() as client:
            response = await client.request(
                method, path, content=body, headers=headers, params=params
            )
    except httpx.HTTPError as exc:
        raise ApiError(f"cannot reach the API at {api_url()} ({type(exc).__name__})") from exc
    if response.status_code >= 400:
        raise ApiError(_error_detail(response), response.status_code)
    return response.content


def _error_detail(response: httpx.Response) -> str:
    try:
        detail = msgspec.json.decode(response.content, type=ErrorBody).detail
    except msgspec.DecodeError:
        detail = ""
    return f"the API answered {response.status_code}" + (f": {detail}" if detail else "")


def _decode(raw: bytes, kind: type[T]) -> T:
    try:
        return msgspec.json.decode(raw, type=kind)
    except msgspec.DecodeError as exc:
        raise ApiError(f"unexpected answer from the API: {exc}") from exc


async def list_chats() -> list[ChatSummary]:
    """`GET /api/chats`, newest first."""
    return _decode(await _request("GET", "/api/chats"), list[ChatSummary])


async def create_chat(
    title: str | None = None, *, mode: ChatMode = "lesson", material_id: str | None = None
) -> ChatSummary:
    """`POST /api/chats`; a `review` chat's teacher gets the due items and probes them; with
    `material_id`, a lesson from that material."""
    body = _ENCODER.encode(CreateChat(title=title, mode=mode, material_id=material_id))
    return _decode(await _request("POST", "/api/chats", body), ChatSummary)


def _moment(as_of: datetime | None) -> dict[str, str] | None:
    return {"as_of": as_of.isoformat()} if as_of is not None else None


async def get_graph(as_of: datetime | None = None) -> GraphSnapshot:
    """`GET /api/graph[?as_of=ISO]`: the graph as of a moment (default the server's now)."""
    raw = await _request("GET", "/api/graph", params=_moment(as_of))
    return _decode(raw, GraphSnapshot)


async def get_review(limit: int | None = None) -> ReviewQueue:
    """`GET /api/review[?limit=N]`: the review queue as of now, most urgent first."""
    params = {"limit": str(limit)} if limit is not None else None
    return _decode(await _request("GET", "/api/review", params=params), ReviewQueue)


async def get_calibration() -> Calibration:
    """`GET /api/calibration`."""
    return _decode(await _request("GET", "/api/calibration"), Calibration)


async def extract(chat_id: str) -> ExtractAccepted:
    """`POST /api/chats/{id}/extract`: the session-end flush."""
    return _decode(await _request("POST", f"/api/chats/{chat_id}/extract", b"{}"), ExtractAccepted)


async def chat_status(chat_id: str) -> int:
    """The HTTP status `GET /api/chats/{id}` answers (0 when the API cannot be reached)."""
    try:
        await _request("GET", f"/api/chats/{chat_id}")
    except ApiError as exc:
        return exc.status
    return 200


async def get_chat_page(chat_id: str, before: str, limit: int) -> ChatView:
    """`GET /api/chats/{id}?before=&limit=`: the `limit` messages before message `before`."""
    query = httpx.QueryParams(before=before, limit=limit)
    raw = await _request("GET", f"/api/chats/{chat_id}?{query}")
    return _decode(raw, ChatView)


async def get_job(job_id: str) -> Job:
    """`GET /api/jobs/{id}`."""
    return _decode(await _request("GET", f"/api/jobs/{job_id}"), Job)


async def get_trace(chat_id: str) -> list[AnyTraceEvent]:
    """`GET /api/chats/{id}/trace`: the session's trace events (404 → `ApiError.status`)."""
    raw = await _request("GET", f"/api/chats/{chat_id}/trace")
    return _decode(raw, list[AnyTraceEvent])


EXPORT_TIMEOUT = httpx.Timeout(120.0, connect=3.0)
"""An export reads the learner's whole history: longer than a read of one thing."""
EXPORT_NAMES = {"archive": "learning-harness.zip", "anki": "learning-harness.apkg"}
_FILENAME = re.compile(r'filename="([^"/\\]+)"')


async def export(kind: str) -> tuple[bytes, str]:
    """`GET /api/export?format=kind`: the file's bytes and the name the API gives it."""
    try:
        async with httpx.AsyncClient(
            base_url=api_url(), headers=auth_headers(), timeout=EXPORT_TIMEOUT
        ) as client:
            response = await client.get("/api/export", params={"format": kind})
    except httpx.HTTPError as exc:
        raise ApiError(f"cannot reach the API at {api_url()} ({type(exc).__name__})") from exc
    if response.status_code >= 400:
        raise ApiError(_error_detail(response), response.status_code)
    named = _FILENAME.search(response.headers.get("content-disposition", ""))
    fallback = EXPORT_NAMES.get(kind, "learning-harness-notes.zip")
    return response.content, named.group(1) if named else fallback


async def health() -> Health:
    """`GET /healthz`: the model, and whether learners sign in (`auth`)."""
    return _decode(await _request("GET", "/healthz"), Health)


async def sign_up(username: str, password: str) -> None:
    """`POST /api/accounts` (409: taken; 400: a name or password it cannot take)."""
    await _request(
        "POST", "/api/accounts", _ENCODER.encode(Credentials(username=username, password=password))
    )


async def sign_in(username: str, password: str) -> SessionToken:
    """`POST /api/session` (401: unknown username or wrong password, one answer)."""
    body = _ENCODER.encode(Credentials(username=username, password=password))
    return _decode(await _request("POST", "/api/session", body), SessionToken)


async def sign_out() -> None:
    """`DELETE /api/session`: the tab's token stops working."""
    await _request("DELETE", "/api/session")


UPLOAD_TIMEOUT = httpx.Timeout(300.0, connect=3.0)
"""Reading a long PDF takes a while (about 30 pages a second here)."""


async def upload_material(data: bytes, filename: str, upload_id: str) -> Material:
    """`POST /api/materials?upload_id=…` (multipart `file`): the stored Material; a file the
    API refuses (too large, another type, unreadable) raises `Refused` with its reason."""
    files = {"file": (filename or "upload", data, "application/octet-stream")}
    try:
        async with httpx.AsyncClient(
            base_url=api_url(), headers=auth_headers(), timeout=UPLOAD_TIMEOUT
        ) as client:
            response = await client.post(
                "/api/materials", files=files, params={"upload_id": upload_id}
            )
    except httpx.HTTPError as exc:
        raise ApiError(f"cannot reach the API at {api_url()} ({type(exc).__name__})") from exc
    if response.status_code in (413, 415, 422):
        raise Refused(_detail(response) or "the file was refused", response.status_code)
    if response.status_code >= 400:
        raise ApiError(_error_detail(response), response.status_code)
    return _decode(response.content, Material)


def _detail(response: httpx.Response) -> str:
    try:
        return msgspec.json.decode(response.content, type=ErrorBody).detail
    except msgspec.DecodeError:
        return ""


async def upload_progress(upload_id: str) -> IngestProgress:
    """`GET /api/materials/uploads/{id}`: how far an upload has got."""
    raw = await _request("GET", f"/api/materials/uploads/{upload_id}")
    return _decode(raw, IngestProgress)


async def list_materials() -> list[Material]:
    """`GET /api/materials`, newest first."""
    return _decode(await _request("GET", "/api/materials"), list[Material])


async def remove_material(material_id: str) -> None:
    """`DELETE /api/materials/{id}`."""
    await _request("DELETE", f"/api/materials/{material_id}")


async def search_materials(query: str, limit: int = 8) -> SearchHits:
    """`GET /api/materials/search?q=…&limit=…`."""
    raw = await _request("GET", "/api/materials/search", params={"q": query, "limit": str(limit)})
    return _decode(raw, SearchHits)
