"""One learner's data as one file: the archive, the Anki deck or the Markdown vault (zipped),
for `GET /api/export` and `harness export`. The learner is whoever owns `stores`: nothing of
another learner's is reachable from them."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Literal

import anyio.to_thread

from backend.core.ports import Clock
from backend.portability.anki import export_anki
from backend.portability.archive import LearnerStores, export_archive
from backend.portability.vault_files import vault_files, vault_zip
from shared_contracts.graph import GraphSnapshot

ExportFormat = Literal["archive", "anki", "markdown"]
ZIP = "application/zip"
"""Every export is a zip: the archive, the vault's folder, and an .apkg (Anki's own zip)."""


@dataclass(frozen=True, slots=True)
class ExportFile:
    data: bytes
    filename: str
    """What a download saves it as: the format and the day it was taken."""


async def export_file(
    stores: LearnerStores,
    snapshot: GraphSnapshot,
    kind: ExportFormat,
    *,
    clock: Clock,
    traces: bool = True,
) -> ExportFile:
    """The learner's `kind` of export; `snapshot` is the graph as the learner sees it (the
    deck's due days and the vault's states come from it). `traces` only for the archive."""
    day = clock.now().date().isoformat()
    out = io.BytesIO()
    match kind:
        case "archive":
            await export_archive(stores, out, clock=clock, traces=traces)
            return ExportFile(out.getvalue(), f"learning-harness-{day}.zip")
        case "anki":
            await export_anki(stores.graph, snapshot, out, clock=clock)
            return ExportFile(out.getvalue(), f"learning-harness-{day}.apkg")
        case "markdown":
            files = await vault_files(stores.chats, snapshot)
            data = await anyio.to_thread.run_sync(vault_zip, files)
            return ExportFile(data, f"learning-harness-notes-{day}.zip")
