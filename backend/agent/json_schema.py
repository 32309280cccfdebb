"""The one JSON Schema shape model providers accept: an object at the root."""

from __future__ import annotations

from typing import Any

import msgspec


def object_schema(struct: type[msgspec.Struct]) -> dict[str, Any]:
    """`struct`'s JSON Schema with an object root and its parts under `$defs`.

    msgspec's own root is a `$ref`, which tool parameters and `response_format` refuse."""
    (_,), components = msgspec.json.schema_components([struct], ref_template="#/$defs/{name}")
    root: dict[str, Any] = dict(components.pop(struct.__name__))
    return {**root, "$defs": components} if components else root
