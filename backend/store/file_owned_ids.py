"""OwnedIds on files: a learner owns an id when its file (or material directory) is in the
learner's own directory — one `stat`, no record read."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from backend.core.ports import OwnedKind
from backend.store.paths import id_path

_WHERE: dict[OwnedKind, tuple[str, str]] = {
    "chat": ("chats", ".json"),
    "job": ("jobs", ".json"),
    "material": ("materials", ""),
}


class FileOwnedIds:
    """The ids under one learner's root (`data_dir`, or `data_dir/learners/<id>`)."""

    def __init__(self, root: Path) -> None:
        self._root = str(root)

    async def owns(self, kind: OwnedKind, item_id: str) -> bool:
        directory, suffix = _WHERE[kind]
        path = id_path(os.path.join(self._root, directory), item_id, suffix, f"{kind} id")
        return await anyio.to_thread.run_sync(os.path.exists, path)
