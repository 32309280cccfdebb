"""The learner's materials over HTTP (PROTOCOL.md): add (multipart `file`), list, search,
remove, and an upload's progress. A router of its own, built with the size limit: a body
over it is refused (413) before it is read, and nothing partial is ever stored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Request, Response, Router, delete, get, post, route
from litestar.datastructures import UploadFile
from litestar.enums import HttpMethod, RequestEncodingType
from litestar.exceptions import ValidationException
from litestar.exceptions.http_exceptions import RequestEntityTooLarge
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Body, QueryParameter

from backend.core.ids import require_id
from backend.ingest.document import too_large
from backend.ingest.materials import MaterialService
from backend.server.errors import harness_error
from backend.server.ownership import owned, services_of
from backend.server.routes import PathId
from shared_contracts.base import STRICT_ID_PATTERN
from shared_contracts.http import ErrorBody
from shared_contracts.ingest import IngestProgress
from shared_contracts.materials import Material, SearchHits

AnyRequest = Request[Any, Any, Any]
MULTIPART_OVERHEAD = 64 * 1024
"""Room for the multipart envelope around the file (boundaries, part headers)."""

UPLOAD_ERRORS = {
    400: ResponseSpec(ErrorBody, description="no `file` part, or an invalid upload id"),
    413: ResponseSpec(ErrorBody, description="over the size limit"),
    415: ResponseSpec(ErrorBody, description="not a PDF, Markdown or plain-text file"),
    422: ResponseSpec(
        ErrorBody,
        description="unreadable: encrypted, scanned (no text), empty, or not what its name says",
    ),
}
NOT_FOUND = {
    400: ResponseSpec(ErrorBody, description="invalid id"),
    404: ResponseSpec(ErrorBody, description="no such material or upload"),
}
UploadId = Annotated[
    str | None, QueryParameter(name="upload_id", pattern=STRICT_ID_PATTERN, max_length=64)
]
"""The client's name for an upload, to ask its progress while the POST is in flight."""


async def _materials(request: AnyRequest) -> MaterialService:
    """The signed-in learner's materials (through the ownership seam)."""
    return (await services_of(request)).materials


@dataclass
class MaterialUpload:
    """The multipart body of `POST /api/materials`."""

    file: UploadFile


@route(
    "/",
    http_method=[HttpMethod.OPTIONS],
    include_in_schema=False,
    sync_to_thread=False,
    status_code=204,
)
def materials_options(request: AnyRequest) -> Response[None]:
    """`OPTIONS /api/materials`, `Allow` naming every method (see `routes.chats_options`)."""
    methods = sorted(request.app.route_handler_method_map.get("/api/materials", {}))
    return Response(content=None, status_code=204, headers={"Allow": ", ".join(methods)})


@post("/", status_code=201, responses=UPLOAD_ERRORS)
async def add_material(
    request: AnyRequest,
    data: Annotated[MaterialUpload, Body(media_type=RequestEncodingType.MULTI_PART)],
    upload_id: UploadId = None,
) -> Material:
    """Store one PDF, Markdown or plain-text file (its type read from its bytes, not its
    name); answers once it is stored, or refused with nothing stored."""
    if not isinstance(data.file, UploadFile):
        raise ValidationException("send the document as the multipart part `file`")
    content = await data.file.read()
    materials = await _materials(request)
    return await materials.add(content, data.file.filename or "", upload_id)


@get("/")
async def list_materials(request: AnyRequest) -> list[Material]:
    """The learner's materials, newest first."""
    return await (await _materials(request)).list_all()


@get("/search")
async def search_materials(
    request: AnyRequest,
    q: Annotated[str, QueryParameter(min_length=1, max_length=300)],
    limit: Annotated[int, QueryParameter(ge=1, le=50)] = 8,
    material_id: Annotated[
        str | None, QueryParameter(pattern=STRICT_ID_PATTERN, max_length=64)
    ] = None,
) -> SearchHits:
    """The best passages for `q` (BM25), of one material or all."""
    if material_id is None:
        materials = await _materials(request)
    else:
        services, material_id = await owned(request, "material", material_id)
        materials = services.materials
    return SearchHits(hits=await materials.search(q, limit, material_id))


@get("/uploads/{upload_id:str}", responses=NOT_FOUND)
async def upload_progress(request: AnyRequest, upload_id: PathId) -> IngestProgress:
    """How far an upload has got (kept for a few minutes after it ends)."""
    return (await _materials(request)).progress.get(require_id(upload_id, "upload id"))


@delete("/{material_id:str}", status_code=204, responses=NOT_FOUND)
async def remove_material(request: AnyRequest, material_id: PathId) -> None:
    """Remove a material, its text and its index entries."""
    services, material_id = await owned(request, "material", material_id)
    await services.materials.remove(material_id)


def materials_router(max_bytes: int) -> Router:
    """The routes under `/api/materials`, refusing a body past `max_bytes` (413)."""

    def refuse(request: AnyRequest, exc: RequestEntityTooLarge) -> Response[ErrorBody]:
        return harness_error(request, too_large(max_bytes))

    return Router(
        path="/api/materials",
        route_handlers=[
            materials_options,  # first: the path's OPTIONS answer is this one
            add_material,
            list_materials,
            search_materials,
            upload_progress,
            remove_material,
        ],
        request_max_body_size=max_bytes + MULTIPART_OVERHEAD,
        exception_handlers={RequestEntityTooLarge: refuse},
    )
