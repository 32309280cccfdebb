"""Ids become file paths only here: validated first, then checked to stay inside the root."""

from __future__ import annotations

import os

from backend.core.errors import InvalidId
from backend.core.ids import require_id


def id_path(directory: str, value: object, suffix: str, what: str = "id") -> str:
    """`directory/<id><suffix>` for a valid id; `InvalidId` before anything touches a file."""
    safe = require_id(value, what)
    path = os.path.join(directory, safe + suffix)
    # Belt and braces: the pattern already forbids separators and dots.
    if os.path.dirname(os.path.normpath(path)) != os.path.normpath(directory):
        raise InvalidId(f"invalid {what}: {safe!r} leaves its directory")
    return path
