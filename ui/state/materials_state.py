"""The learner's materials: the list, adding one (with progress), removing one, and starting
a lesson from one. Shared by home and the classroom (the "Add material" dialog).

Adding is one background task: the file streams from the browser to this server (the
browser reports how much is sent), then goes to the API with an upload id; while the API
reads it, the task polls the API's progress for that id ("Reading page 120 of 800")."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from typing import Any

import reflex as rx

from shared_contracts.materials import Material
from ui import api
from ui.model import materials_view as view
from ui.model.materials_view import MaterialRow
from ui.practise import ask_href

UPLOAD_ID = "material-upload"
DIALOG_STATUS_ID = "material-status"
POLL_SECONDS = 0.5
MAX_BYTES = view.MAX_UPLOAD_MB * 1_000_000
"""Bytes kept from a dropped file; past this the API's own limit answers (413)."""


class MaterialsState(rx.State):
    materials: rx.Field[list[MaterialRow]] = rx.field(default_factory=list)
    loaded: bool = False
    dialog_open: bool = False
    busy: bool = False
    status: str = ""
    """How far adding has got, in words ("" when nothing is being added)."""
    percent: int = 0
    error: str = ""
    added: str = ""
    """What the last upload added, in words."""
    added_id: str = ""
    confirm_remove: str = ""
    """The material whose removal waits for a "Yes"."""
    starting: str = ""

    @rx.event
    def open_dialog(self, is_open: bool = True) -> rx.event.EventSpec | None:
        self.dialog_open = is_open
        if is_open:
            self.error, self.added, self.confirm_remove = "", "", ""
            return MaterialsState.load_materials
        return None

    @rx.event(background=True)
    async def load_materials(self) -> None:
        try:
            found = await api.list_materials()
        except api.ApiError as exc:
            async with self:
                self.error = f"Your materials could not be loaded: {exc}"
            return
        async with self:
            self._show(found)

    def _show(self, found: list[Material]) -> None:
        self.materials = view.material_rows(found)
        self.loaded = True

    @rx.event
    def sent(self, progress: dict[str, Any]) -> None:
        """The browser's report of how much of the file has reached this server."""
        fraction = progress.get("progress")
        if self.busy and isinstance(fraction, int | float) and fraction < 1:
            self.status = view.sending_text(100 * fraction)
            self.percent = int(10 * fraction)

    @rx.event(background=True)
    async def upload(self, chunks: rx.UploadChunkIterator) -> None:
        """A dropped or chosen file: read it here, hand it to the API, report progress."""
        async with self:
            if self.busy:
                return
            self.busy, self.error, self.added, self.added_id = True, "", "", ""
            self.status, self.percent = view.sending_text(0), 0
        data, filename = bytearray(), ""
        async for chunk in chunks:
            filename = filename or chunk.filename
            if chunk.offset < MAX_BYTES + 1:  # keep one byte past the limit: the API says 413
                data[chunk.offset : chunk.offset + len(chunk.data)] = chunk.data[: MAX_BYTES + 1]
        try:
            material = await self._hand_over(bytes(data), filename)
        except api.Refused as exc:
            await self._finish(error=view.refused_text(exc.detail, exc.status))
            return
        except api.ApiError as exc:
            await self._finish(error=f"The file could not be added: {exc}")
            return
        try:
            found = await api.list_materials()
        except api.ApiError:
            found = [material]
        async with self:
            self._show(found)
            self.added, self.added_id = view.added_text(material), material.id
        await self._finish()

    async def _hand_over(self, data: bytes, filename: str) -> Material:
        """POST the file, polling its progress meanwhile."""
        upload_id = "up-" + secrets.token_hex(8)
        poller = asyncio.create_task(self._poll(upload_id))
        try:
            return await api.upload_material(data, filename, upload_id)
        finally:
            poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poller

    async def _poll(self, upload_id: str) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            try:
                progress = await api.upload_progress(upload_id)
            except api.ApiError:
                continue  # not started yet, or a blip: the POST has the last word
            async with self:
                self.status = view.progress_text(progress)
                self.percent = max(self.percent, view.progress_percent(progress))

    async def _finish(self, error: str = "") -> None:
        async with self:
            self.busy, self.status, self.percent, self.error = False, "", 0, error

    @rx.event
    def ask_remove(self, material_id: str) -> None:
        self.confirm_remove = material_id

    @rx.event
    def keep(self) -> None:
        self.confirm_remove = ""

    @rx.event
    async def remove(self, material_id: str) -> None:
        self.confirm_remove = ""
        try:
            await api.remove_material(material_id)
            self._show(await api.list_materials())
        except api.ApiError as exc:
            self.error = f"The material could not be removed: {exc}"
        if self.added_id == material_id:
            self.added, self.added_id = "", ""

    @rx.event
    async def start_lesson(self, material_id: str, title: str):
        """A lesson from the material: its chat, opened with "Teach me “…”"."""
        if self.starting:
            return None
        self.starting = material_id
        try:
            chat = await api.create_chat(view.lesson_title(title), material_id=material_id)
        except api.ApiError as exc:
            self.error = f"Could not start the lesson: {exc}"
            return None
        finally:
            self.starting = ""
        self.dialog_open = False
        return rx.redirect(ask_href(chat.id, view.lesson_ask(title)))
