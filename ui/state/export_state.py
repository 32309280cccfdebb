"""Home's Export menu: the learner's archive, Anki deck or Markdown notes, fetched from the
API (`GET /api/export`) and handed to the browser as a download."""

from __future__ import annotations

from collections.abc import AsyncIterator

import reflex as rx
from reflex.event import EventSpec

from ui import api

EXPORTS = {
    "archive": "Everything (archive .zip)",
    "anki": "Anki deck (.apkg)",
    "markdown": "Markdown notes (.zip)",
}
"""The formats the API offers, and how the menu names them."""


class ExportState(rx.State):
    busy: str = ""
    """The format being fetched ("" when none is)."""
    error: str = ""

    @rx.event(background=True)
    async def export(self, kind: str) -> AsyncIterator[EventSpec]:
        if kind not in EXPORTS:
            return
        async with self:
            if self.busy:
                return
            self.busy, self.error = kind, ""
        try:
            data, filename = await api.export(kind)
        except api.ApiError as exc:
            async with self:
                self.busy, self.error = "", f"The export did not work: {exc}."
            return
        async with self:
            self.busy = ""
        yield rx.download(data=data, filename=filename, mime_type="application/zip")

    @rx.event
    def dismiss(self) -> None:
        self.error = ""
