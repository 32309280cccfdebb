"""HTTP routes (PROTOCOL.md). Handlers validate ids, call services, return Structs."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from litestar import Request, Response, get, post, route
from litestar.enums import HttpMethod
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Body, Parameter, QueryParameter

from backend.core.ids import require_id
from backend.core.moments import EXAMPLE, parse_moment
from backend.core.review import QUEUE_LIMIT
from backend.core.views import MAX_PAGE, Page
from backend.portability.export import ZIP, ExportFormat, export_file
from backend.server.ownership import owned, services_of
from backend.server.recording import stored_traces
from backend.server.security import PUBLIC
from backend.server.settings import Settings
from shared_contracts.base import STRICT_ID_PATTERN
from shared_contracts.chat import ChatSummary, ChatView
from shared_contracts.graph import GraphSnapshot
from shared_contracts.http import CreateChat, ErrorBody, ExtractAccepted, GraphContext, Health
from shared_contracts.jobs import Job
from shared_contracts.learner import Calibration, ReviewQueue
from shared_contracts.trace import AnyTraceEvent

AnyRequest = Request[Any, Any, Any]


PathId = Annotated[
    str,
    Parameter(
        pattern=STRICT_ID_PATTERN,
        max_length=64,
        examples=[Example(value="chat-0123abcd4567")],
    ),
]
"""A path id: documented with its pattern; validated again (`ownership.owned`) before use."""
PageLimit = Annotated[
    int | None,
    Parameter(ge=1, le=MAX_PAGE, description="at most this many messages (the latest ones)"),
]
BeforeId = Annotated[
    str | None,
    Parameter(
        pattern=STRICT_ID_PATTERN,
        max_length=64,
        description="only messages before this message id (the page before it)",
    ),
]

ERRORS = {
    400: ResponseSpec(ErrorBody, description="invalid id or body"),
    404: ResponseSpec(ErrorBody, description="no such chat or job"),
}
BAD_BODY = {400: ResponseSpec(ErrorBody, description="invalid body")}
BAD_QUERY = {400: ResponseSpec(ErrorBody, description="invalid query parameter")}
CREATE_ERRORS = {**BAD_BODY, 404: ResponseSpec(ErrorBody, description="no such material")}
TRACE_ERRORS = {
    **ERRORS,
    409: ResponseSpec(ErrorBody, description="a turn is running"),
}


@get("/healthz", sync_to_thread=False, opt={PUBLIC: True})
def healthz(request: AnyRequest) -> Health:
    settings: Settings = request.app.state.settings
    return Health(model=settings.model_label, offline=settings.offline, auth=settings.auth)


@route(
    "/api/chats",
    http_method=[HttpMethod.OPTIONS],
    include_in_schema=False,
    sync_to_thread=False,
    status_code=204,
)
def chats_options(request: AnyRequest) -> Response[None]:
    """`OPTIONS /api/chats`, `Allow` naming every method: Litestar's automatic answer for
    a path whose handlers are registered one by one names only the first one's."""
    methods = sorted(request.app.route_handler_method_map.get("/api/chats", {}))
    return Response(content=None, status_code=204, headers={"Allow": ", ".join(methods)})


@post("/api/chats", status_code=201, responses=CREATE_ERRORS)
async def create_chat(
    request: AnyRequest, data: Annotated[CreateChat | None, Body()] = None
) -> ChatSummary:
    """A new chat (a lesson, or a review with `mode`); with `material_id`, a lesson taught
    from that document (404 when the learner has no such material)."""
    chats = (await services_of(request)).chats
    if data is None:
        return await chats.create()
    return await chats.create(data.title, mode=data.mode, material_id=data.material_id)


@get("/api/chats")
async def list_chats(request: AnyRequest) -> list[ChatSummary]:
    return await (await services_of(request)).chats.summaries()


@get("/api/chats/{chat_id:str}", responses=ERRORS)
async def get_chat(
    request: AnyRequest, chat_id: PathId, before: BeforeId = None, limit: PageLimit = None
) -> ChatView:
    """The chat, or a page of its messages (`earlier` counts those before the page)."""
    page = Page(before=require_id(before, "message id") if before else None, limit=limit)
    services, chat_id = await owned(request, "chat", chat_id)
    return await services.chats.view(chat_id, page)


@post("/api/chats/{chat_id:str}/extract", status_code=202, responses=ERRORS)
async def extract_chat(request: AnyRequest, chat_id: PathId) -> ExtractAccepted:
    """The session-end flush: runs the extraction trigger now (single-flight per chat)."""
    services, chat_id = await owned(request, "chat", chat_id)
    await services.chats.record(chat_id)  # 404 for an unknown chat
    return await services.end_session(chat_id)  # recorded, so a replay runs it too


AsOf = Annotated[
    str | None,
    Parameter(
        description="an ISO 8601 moment (a date-time with a zone, or a date); default now",
        examples=[Example(value=EXAMPLE)],
        schema_extra={"format": "date-time"},
    ),
]
"""`?as_of=`: read as text and parsed by `parse_moment`, so a bad one is a 400 that says
what a moment looks like."""
BAD_AS_OF = {400: ResponseSpec(ErrorBody, description="as_of is not an ISO 8601 moment")}


def _moment(as_of: str | None) -> datetime | None:
    return None if as_of is None else parse_moment(as_of)


@get("/api/graph", responses=BAD_AS_OF)
async def get_graph(request: AnyRequest, as_of: AsOf = None) -> GraphSnapshot:
    """The graph derived from the events up to `as_of` (default now), each node with its
    memory then."""
    return await (await services_of(request)).graph.snapshot(_moment(as_of))


@get("/api/review", responses=BAD_AS_OF)
async def get_review(
    request: AnyRequest,
    as_of: AsOf = None,
    limit: Annotated[int, Parameter(ge=1, le=10_000)] = QUEUE_LIMIT,
) -> ReviewQueue:
    """What to study as of `as_of` (default now), most urgent first: its first `limit`
    items; `total` says how many nodes are queued."""
    return await (await services_of(request)).graph.review(_moment(as_of), limit)


@get("/api/calibration", responses=BAD_AS_OF)
async def get_calibration(request: AnyRequest, as_of: AsOf = None) -> Calibration:
    """Stated confidence against correctness over the answers given up to `as_of`."""
    return await (await services_of(request)).graph.calibration(_moment(as_of))


@get("/api/graph/context")
async def get_graph_context(request: AnyRequest) -> GraphContext:
    return await (await services_of(request)).graph.context()


@get("/api/jobs/{job_id:str}", responses=ERRORS)
async def get_job(request: AnyRequest, job_id: PathId) -> Job:
    services, job_id = await owned(request, "job", job_id)
    return await services.job(job_id)


@get("/api/chats/{chat_id:str}/trace", responses=TRACE_ERRORS)
async def get_trace(request: AnyRequest, chat_id: PathId) -> list[AnyTraceEvent]:
    """The session's trace (an open question's key withheld); not while a turn runs."""
    services, chat_id = await owned(request, "chat", chat_id)
    return await services.chats.trace(chat_id)


ExportQuery = Annotated[
    ExportFormat,
    QueryParameter(
        name="format",
        description="archive: everything, to import elsewhere; anki: a deck of the graph's"
        " propositions (.apkg); markdown: one note per node, zipped",
    ),
]
TracesQuery = Annotated[
    bool, QueryParameter(name="traces", description="the archive holds the sessions' traces")
]
EXPORTED = {
    200: ResponseSpec(bytes, description="the file, as `harness export` writes it", media_type=ZIP),
    **BAD_QUERY,
}


@get("/api/export", media_type=ZIP, responses=EXPORTED)
async def export(
    request: AnyRequest, kind: ExportQuery = "archive", traces: TracesQuery = True
) -> Response[bytes]:
    """The learner's data as one file (a download): `harness export` over HTTP."""
    services = await services_of(request)
    exported = await export_file(
        stored_traces(services.stores),
        await services.graph.snapshot(),
        kind,
        clock=services.clock,
        traces=traces,
    )
    return Response(
        exported.data,
        media_type=ZIP,
        headers={"Content-Disposition": f'attachment; filename="{exported.filename}"'},
    )


ROUTES = [
    healthz,
    chats_options,  # first: the path's OPTIONS answer is this one, not Litestar's
    create_chat,
    list_chats,
    get_chat,
    extract_chat,
    get_graph,
    get_graph_context,
    get_review,
    get_calibration,
    get_job,
    get_trace,
    export,
]
