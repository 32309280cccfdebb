"""HTTP routes (PROTOCOL.md). Handlers validate ids, call services, return Structs."""

from __future__ import annotations

from typing import Annotated

from litestar import Request, get, post
from litestar.params import Body, FromPath

from backend.core.ids import require_id
from backend.server.services import Services
from shared_contracts.chat import ChatSummary, ChatView
from shared_contracts.graph import GraphSnapshot
from shared_contracts.http import CreateChat, ExtractAccepted, GraphContext, Health
from shared_contracts.jobs import Job
from shared_contracts.trace import AnyTraceEvent


def _services(request: Request) -> Services:
    return request.app.state.services


@get("/healthz", sync_to_thread=False)
def healthz(request: Request) -> Health:
    settings = _services(request).settings
    return Health(model=settings.model_label, offline=settings.offline)


@post("/api/chats", status_code=201)
async def create_chat(
    request: Request, data: Annotated[CreateChat | None, Body()] = None
) -> ChatSummary:
    services = _services(request)
    record = await services.handler.create_chat(data.title if data else None)
    return ChatSummary(
        id=record.id,
        title=record.title,
        created_at=record.created_at,
        updated_at=record.updated_at,
        model=record.model,
        turns=record.turns,
        messages=len(record.messages),
    )


@get("/api/chats")
async def list_chats(request: Request) -> list[ChatSummary]:
    return await _services(request).stores.chats.list_summaries()


@get("/api/chats/{chat_id:str}")
async def get_chat(request: Request, chat_id: FromPath[str]) -> ChatView:
    return await _services(request).handler.view(require_id(chat_id, "chat id"))


@post("/api/chats/{chat_id:str}/extract", status_code=202)
async def extract_chat(request: Request, chat_id: FromPath[str]) -> ExtractAccepted:
    """The session-end flush: runs the extraction trigger now (single-flight per chat)."""
    services = _services(request)
    chat_id = require_id(chat_id, "chat id")
    await services.stores.chats.get(chat_id)  # 404 for an unknown chat
    return await services.extraction.flush(chat_id)


@get("/api/graph")
async def get_graph(request: Request) -> GraphSnapshot:
    return await _services(request).graph.snapshot()


@get("/api/graph/context")
async def get_graph_context(request: Request) -> GraphContext:
    return await _services(request).graph.context()


@get("/api/jobs/{job_id:str}")
async def get_job(request: Request, job_id: FromPath[str]) -> Job:
    return await _services(request).stores.jobs.get(require_id(job_id, "job id"))


@get("/api/chats/{chat_id:str}/trace")
async def get_trace(request: Request, chat_id: FromPath[str]) -> list[AnyTraceEvent]:
    services = _services(request)
    chat_id = require_id(chat_id, "chat id")
    await services.stores.chats.get(chat_id)
    return await services.stores.traces.read(chat_id)


ROUTES = [
    healthz,
    create_chat,
    list_chats,
    get_chat,
    extract_chat,
    get_graph,
    get_graph_context,
    get_job,
    get_trace,
]
