"""The Markdown vault (`core.portability.vault`) written out: into a directory, or as a zip
for a download. A directory must be new or empty (an export never overwrites a note)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from pathlib import Path

import anyio.to_thread

from backend.core.errors import HarnessError
from backend.core.portability.vault import build_vault
from backend.core.ports import ChatStore
from shared_contracts.graph import GraphSnapshot

ZIP_FOLDER = "Learning Harness"
"""The one folder a vault's zip unpacks into."""


class VaultRefused(HarnessError):
    """The vault's directory holds files already: nothing is written."""

    code = "export_refused"


async def vault_files(chats: ChatStore, snapshot: GraphSnapshot) -> dict[str, str]:
    """The vault of `snapshot` (the graph as the learner sees it) and the learner's chats
    (built in a worker thread, off a server's event loop)."""
    summaries = await chats.list_summaries()
    return await anyio.to_thread.run_sync(build_vault, snapshot, summaries)


def write_vault(files: Mapping[str, str], directory: Path) -> None:
    """Write `files` under `directory` (made if missing; `VaultRefused` if it holds any)."""
    directory = Path(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise VaultRefused(
            f"{directory} is not an empty directory: give a new or empty one for the vault"
        )
    directory.mkdir(parents=True, exist_ok=True)
    root = directory.resolve()
    for name, body in files.items():
        path = (root / name).resolve()
        if root not in path.parents:  # names are made safe; this only proves it
            raise VaultRefused(f"refusing to write {name!r} outside {directory}")
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8", newline="\n") as note:
            note.write(body)


def vault_zip(files: Mapping[str, str]) -> bytes:
    """The vault as a zip whose files sit in one folder, `Learning Harness/`."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, body in files.items():
            info = zipfile.ZipInfo(f"{ZIP_FOLDER}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            zf.writestr(info, body.encode("utf-8"))
    return out.getvalue()
