"""MaterialStore and SearchPort on files plus an SQLite FTS5 index, all under `root/materials/`.

The files are the truth (`MaterialFiles`: one directory per material, committed by a
rename); the index (`materials/index.sqlite3`) is derived. `add` commits the files, then
indexes the chunks in one transaction, and removes the files again if indexing fails. At
open the index is reconciled with the files: rows of a material that is gone are dropped,
a committed material the index lacks (a crash between the two steps) is indexed.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from pathlib import Path

import anyio.to_thread

from backend.core.errors import HarnessError, NotFound
from backend.store.fileops import FileOps, OsFileOps
from backend.store.fts_index import FtsIndex
from backend.store.keyed_locks import KeyedLocks
from backend.store.material_files import MaterialFiles
from shared_contracts.materials import Material, MaterialHit, MaterialText

log = logging.getLogger("harness.materials")

INDEX_FILE = "index.sqlite3"
TEXTS_KEPT = 4
"""Decoded texts kept in memory (quote checks read the same few materials again and again)."""


class FileMaterialStore:
    """A learner's materials under `root/materials/` (a `MaterialStore` and a `SearchPort`)."""

    def __init__(self, root: Path, fs: FileOps | None = None) -> None:
        self._files = MaterialFiles(str(root), fs or OsFileOps())
        self._index_path = os.path.join(self._files.directory, INDEX_FILE)
        self._index: FtsIndex | None = None
        self._locks = KeyedLocks()
        self._texts: OrderedDict[str, MaterialText] = OrderedDict()
        committed = set(self._files.ids())
        if committed or os.path.exists(self._index_path):
            self._reconcile(self._open_index(), committed)

    def _open_index(self) -> FtsIndex:
        """The index, opened (made, the first time) on first need: a data dir with no
        materials gets no index file."""
        if self._index is None:
            self._index = FtsIndex(self._index_path)
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()

    def _reconcile(self, index: FtsIndex, committed: set[str]) -> None:
        indexed = index.material_ids()
        for stale in sorted(indexed - committed):
            index.remove(stale)
            log.info("[materials] dropped index rows of removed material %s", stale)
        for missing in sorted(committed - indexed):
            try:
                material = self._files.material(missing)
                index.add(missing, material.title, self._files.text(missing).chunks)
            except HarnessError as exc:
                log.warning("[materials] material %s could not be indexed: %s", missing, exc)
                continue
            log.info("[materials] indexed material %s (its index rows were missing)", missing)

    # -- MaterialStore ----------------------------------------------------------------

    async def add(self, material: Material, text: MaterialText, original: bytes) -> None:
        async with self._locks.hold(material.id):
            await anyio.to_thread.run_sync(self._add_sync, material, text, original)

    def _add_sync(self, material: Material, text: MaterialText, original: bytes) -> None:
        self._files.commit(material, text, original)
        try:
            self._open_index().add(material.id, material.title, text.chunks)
        except BaseException:
            self._files.discard(material.id)
            raise

    async def get(self, material_id: str) -> Material:
        self._files.path(material_id)  # InvalidId before any I/O
        return await anyio.to_thread.run_sync(self._files.material, material_id)

    async def list_all(self) -> list[Material]:
        """Every material, newest first."""
        found = await anyio.to_thread.run_sync(self._list_sync)
        return sorted(found, key=lambda m: (m.created_at is not None, m.created_at, m.id))[::-1]

    async def has_material(self) -> bool:
        return bool(await anyio.to_thread.run_sync(self._files.ids))

    def _list_sync(self) -> list[Material]:
        out = []
        for material_id in self._files.ids():
            try:
                out.append(self._files.material(material_id))
            except NotFound:
                continue  # removed meanwhile
        return out

    async def text(self, material_id: str) -> MaterialText:
        self._files.path(material_id)
        cached = self._texts.get(material_id)
        if cached is not None and self._files.committed(material_id):
            self._texts.move_to_end(material_id)
            return cached
        text = await anyio.to_thread.run_sync(self._files.text, material_id)
        self._texts[material_id] = text
        while len(self._texts) > TEXTS_KEPT:
            self._texts.popitem(last=False)
        return text

    async def original(self, material_id: str) -> bytes:
        self._files.path(material_id)
        return await anyio.to_thread.run_sync(self._files.original, material_id)

    async def remove(self, material_id: str) -> None:
        self._files.path(material_id)
        async with self._locks.hold(material_id):
            self._texts.pop(material_id, None)
            await anyio.to_thread.run_sync(self._remove_sync, material_id)

    def _remove_sync(self, material_id: str) -> None:
        self._files.discard(material_id)
        self._open_index().remove(material_id)  # if this fails, the next open drops the rows

    # -- SearchPort -------------------------------------------------------------------

    async def search(
        self, query: str, *, limit: int = 8, material_id: str | None = None
    ) -> list[MaterialHit]:
        if material_id is not None:
            self._files.path(material_id)
        return await anyio.to_thread.run_sync(self._search_sync, query, limit, material_id)

    def _search_sync(self, query: str, limit: int, material_id: str | None) -> list[MaterialHit]:
        if self._index is None and not os.path.exists(self._index_path):
            return []  # no material was ever added
        found = self._open_index().search(query, limit, material_id)
        # A material renamed out (removed) whose rows are not deleted yet is not found; a
        # stat per material in the hits, so this holds across processes too.
        committed = {m for m in {hit.material_id for hit in found} if self._files.committed(m)}
        return [
            MaterialHit(
                material_id=hit.material_id,
                page=hit.page,
                text=hit.text,
                score=hit.score,
                title=hit.title,
                heading=hit.heading,
            )
            for hit in found
            if hit.material_id in committed
        ]

    async def page_text(self, material_id: str, page: int) -> str:
        pages = (await self.text(material_id)).pages
        if not 1 <= page <= len(pages):
            raise NotFound(f"material {material_id!r} has no page {page}")
        return pages[page - 1]
