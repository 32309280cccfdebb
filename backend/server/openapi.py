"""The OpenAPI document publishes msgspec's own component schemas for our Structs, and says
which request bodies may be left out.

Litestar derives components itself and drops constraints msgspec enforces (bounds,
`additionalProperties: false`); publishing msgspec's keeps the document and the
decoders in agreement, which the contract tests check. Litestar also marks every request
body required; a handler whose `data` has a default takes a request without one.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import msgspec
from litestar import Litestar, Request
from litestar.handlers import HTTPRouteHandler
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin

from shared_contracts.snapshot import contract_types, contract_unions

_TYPED_PARAM = re.compile(r"\{(\w+):\w+\}")


def msgspec_components() -> dict[str, Any]:
    _, components = msgspec.json.schema_components(
        [*contract_types(), *contract_unions().values()],
        ref_template="#/components/schemas/{name}",
    )
    return components


def optional_bodies(app: Litestar) -> set[tuple[str, str]]:
    """(OpenAPI path, method) of every operation whose body may be left out."""
    found: set[tuple[str, str]] = set()
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            if not isinstance(handler, HTTPRouteHandler):
                continue
            data = inspect.signature(handler.fn).parameters.get("data")
            if data is None or data.default is inspect.Parameter.empty:
                continue
            path = _TYPED_PARAM.sub(r"{\1}", route.path)
            found.update((path, method.lower()) for method in handler.http_methods)
    return found


class MsgspecComponents(JsonRenderPlugin):
    """Renders the document with msgspec's components and honest `requestBody.required`
    (both computed once, at the first request for the document)."""

    def __init__(self) -> None:
        super().__init__()
        self._components: dict[str, Any] | None = None

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        if self._components is None:
            self._components = msgspec_components()
        components = dict(openapi_schema.get("components", {}))
        components["schemas"] = {**components.get("schemas", {}), **self._components}
        paths = openapi_schema.get("paths", {})
        for path, method in optional_bodies(request.app):
            body = paths.get(path, {}).get(method, {}).get("requestBody")
            if isinstance(body, dict):
                body["required"] = False
        return msgspec.json.encode({**openapi_schema, "components": components})


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Learning Harness API",
        version="0.1.0",
        render_plugins=[MsgspecComponents()],
    )
