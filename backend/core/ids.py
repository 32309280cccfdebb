"""Id validation: the one check every id passes before it can become part of a path."""

from __future__ import annotations

import re

from backend.core.errors import InvalidId
from shared_contracts.base import ID_PATTERN

_ID = re.compile(ID_PATTERN)


def is_valid_id(value: object) -> bool:
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def require_id(value: object, what: str = "id") -> str:
    """Return `value` if it is a safe id, else raise `InvalidId` (never echoing 10 KB)."""
    if not is_valid_id(value):
        shown = repr(value)[:80]
        raise InvalidId(f"invalid {what}: {shown} (expected {ID_PATTERN})")
    assert isinstance(value, str)
    return value
