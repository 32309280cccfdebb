"""The OpenAPI document publishes msgspec's own component schemas for our Structs.

Litestar derives components itself and drops constraints msgspec enforces (bounds,
`additionalProperties: false`); publishing msgspec's keeps the document and the
decoders in agreement, which the contract tests check.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec
from litestar import Request
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin

from shared_contracts.snapshot import contract_types, contract_unions


@cache
def msgspec_components() -> dict[str, Any]:
    _, components = msgspec.json.schema_components(
        [*contract_types(), *contract_unions().values()],
        ref_template="#/components/schemas/{name}",
    )
    return components


class MsgspecComponents(JsonRenderPlugin):
    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        components = dict(openapi_schema.get("components", {}))
        components["schemas"] = {**components.get("schemas", {}), **msgspec_components()}
        return msgspec.json.encode({**openapi_schema, "components": components})


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Learning Harness API",
        version="0.1.0",
        render_plugins=[MsgspecComponents()],
    )
