"""A learner's materials as the routes and the CLI see them: added (read in a worker thread,
with progress), listed, searched, removed.

Progress: `POST /api/materials?upload_id=ID` reads the file in a worker thread and answers
once it is stored (or refused, 413/415/422); meanwhile `GET /api/materials/uploads/ID`
answers how far it has got (stage, pages read of all). The upload id is the client's
(the UI polls with it while its POST is in flight), so the POST keeps its plain answer
and status codes; progress lives in this process's memory for a few minutes.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import PurePath

import anyio.to_thread

from backend.core.errors import MaterialRejected, NotFound
from backend.core.ids import require_id
from backend.core.ports import Clock, IdGen, MaterialStore, SearchPort
from backend.ingest.document import Ingested, read_document
from shared_contracts.ingest import IngestProgress, IngestStage
from shared_contracts.materials import Material, MaterialHit

PROGRESS_KEPT = 256
PROGRESS_TTL_S = 600.0
SEARCH_LIMIT_MAX = 50
FILENAME_CHARS = 200


class UploadProgress:
    """How far each upload has got, by the client's upload id (the most recent kept, for
    `PROGRESS_TTL_S`). Written from the reading thread; each write is one dict assignment."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._items: OrderedDict[str, tuple[float, IngestProgress]] = OrderedDict()

    def set(self, progress: IngestProgress) -> None:
        self._items[progress.upload_id] = (self._now(), progress)
        self._items.move_to_end(progress.upload_id)
        while len(self._items) > PROGRESS_KEPT:
            self._items.popitem(last=False)

    def get(self, upload_id: str) -> IngestProgress:
        require_id(upload_id, "upload id")
        found = self._items.get(upload_id)
        if found is None or self._now() - found[0] > PROGRESS_TTL_S:
            raise NotFound(f"no upload {upload_id!r} in progress")
        return found[1]


class MaterialService:
    """Adds, lists, searches and removes one learner's materials."""

    def __init__(
        self,
        materials: MaterialStore,
        search: SearchPort,
        clock: Clock,
        ids: IdGen,
        *,
        max_bytes: int,
        progress: UploadProgress | None = None,
    ) -> None:
        self._materials = materials
        self._search = search
        self._clock = clock
        self._ids = ids
        self.max_bytes = max_bytes
        self.progress = progress or UploadProgress()

    async def add(self, data: bytes, filename: str = "", upload_id: str | None = None) -> Material:
        """Read and store one uploaded file: the Material, or `MaterialRejected` (nothing is
        stored); `upload_id` names its progress (see the module)."""
        if upload_id is not None:
            require_id(upload_id, "upload id")
        name = PurePath(filename.replace("\\", "/")).name[:FILENAME_CHARS]
        report = self._reporter(upload_id)
        report("receiving", 0, 0)
        try:
            doc = await anyio.to_thread.run_sync(self._read, data, name, report)
            material = doc.as_material(
                self._ids.new("mat"), data, filename=name, created_at=self._clock.now()
            )
            await self._materials.add(material, doc.text, data)
        except MaterialRejected as exc:
            self._failed(upload_id, str(exc), exc)
            raise
        except Exception:
            self._failed(upload_id, "the file could not be stored", None)
            raise
        if upload_id is not None:
            pages = material.pages
            self.progress.set(
                IngestProgress(
                    upload_id=upload_id,
                    stage="done",
                    pages_done=pages,
                    pages_total=pages,
                    material=material,
                )
            )
        return material

    def _read(
        self, data: bytes, name: str, report: Callable[[IngestStage, int, int], None]
    ) -> Ingested:
        return read_document(data, name, max_bytes=self.max_bytes, progress=report)

    def _reporter(self, upload_id: str | None) -> Callable[[IngestStage, int, int], None]:
        def report(stage: IngestStage, done: int, total: int) -> None:
            if upload_id is not None:
                self.progress.set(
                    IngestProgress(
                        upload_id=upload_id, stage=stage, pages_done=done, pages_total=total
                    )
                )

        return report

    def _failed(self, upload_id: str | None, message: str, exc: MaterialRejected | None) -> None:
        if upload_id is None:
            return
        self.progress.set(
            IngestProgress(
                upload_id=upload_id,
                stage="failed",
                error=message,
                code=exc.reason if exc is not None else None,
            )
        )

    async def get(self, material_id: str) -> Material:
        require_id(material_id, "material id")
        return await self._materials.get(material_id)

    async def list_all(self) -> list[Material]:
        return await self._materials.list_all()

    async def remove(self, material_id: str) -> None:
        require_id(material_id, "material id")
        await self._materials.remove(material_id)

    async def search(
        self, query: str, limit: int = 8, material_id: str | None = None
    ) -> list[MaterialHit]:
        if material_id is not None:
            require_id(material_id, "material id")
        limit = max(1, min(limit, SEARCH_LIMIT_MAX))
        return await self._search.search(query, limit=limit, material_id=material_id)
