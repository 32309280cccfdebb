"""2. The OpenAPI document is generated from the same Structs, and lists every PROTOCOL route
with its status codes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from backend.server.app import create_app
from backend.server.settings import Settings
from shared_contracts.snapshot import contract_types, contract_unions
from tests.contract.routes import OPENAPI_PATH, PROTOCOL_ROUTES, Route

REF = "#/components/schemas/"
MAX_SHOWN = 25


@pytest.fixture(scope="module")
def document(tmp_path_factory) -> Iterator[dict[str, Any]]:
    app = create_app(Settings(data_dir=tmp_path_factory.mktemp("openapi") / "data"))
    with TestClient(app=app) as client:
        response = client.get(OPENAPI_PATH)
        assert response.status_code == 200
        yield response.json()


def msgspec_components() -> dict[str, Any]:
    """What msgspec itself generates for every contract, with OpenAPI's ref template."""
    _, components = msgspec.json.schema_components(
        [*contract_types(), *contract_unions().values()], ref_template=REF + "{name}"
    )
    return components


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return text if len(text) < 200 else text[:197] + "..."


def component_differences(name: str, served: dict, ours: dict) -> list[str]:
    """Per field: how the served component differs from msgspec's (empty when equal)."""
    problems = []
    if set(served.get("required", [])) != set(ours.get("required", [])):
        problems.append(
            f"{name}: required {sorted(served.get('required', []))} "
            f"!= msgspec {sorted(ours.get('required', []))}"
        )
    if served.get("additionalProperties") != ours.get("additionalProperties"):
        problems.append(
            f"{name}: additionalProperties {served.get('additionalProperties')} "
            f"!= msgspec {ours.get('additionalProperties')}"
        )
    served_props, our_props = served.get("properties", {}), ours.get("properties", {})
    for field in sorted(served_props.keys() | our_props.keys()):
        if served_props.get(field) != our_props.get(field):
            problems.append(
                f"{name}.{field}: served {_short(served_props.get(field))}"
                f" != msgspec {_short(our_props.get(field))}"
            )
    return problems


def test_the_document_is_openapi_3(document):
    assert document["openapi"].startswith("3.")
    assert document["paths"], "no operations documented"


def test_component_schemas_are_msgspecs_own(document):
    served = document.get("components", {}).get("schemas", {})
    ours = msgspec_components()
    shared = sorted(served.keys() & ours.keys())
    bodies = {r.body for r in PROTOCOL_ROUTES if r.body}
    assert bodies <= set(shared), f"route bodies not in components: {bodies - set(shared)}"
    problems = [p for name in shared for p in component_differences(name, served[name], ours[name])]
    shown = problems[:MAX_SHOWN] + [f"... and {len(problems) - MAX_SHOWN} more"] * (
        len(problems) > MAX_SHOWN
    )
    assert not problems, (
        f"{len(problems)} OpenAPI component fields differ from msgspec's (serve "
        "`msgspec.json.schema_components(...)` as components/schemas):\n" + "\n".join(shown)
    )


def test_component_comparison_names_the_field():
    ours = msgspec_components()["UserMessage"]
    served = json.loads(json.dumps(ours))
    served["properties"]["text"]["maxLength"] = 10
    [problem] = component_differences("UserMessage", served, ours)
    assert problem.startswith("UserMessage.text: served")


def route_problems(document: dict[str, Any], route: Route) -> list[str]:
    """What is missing from the document for one PROTOCOL route (empty when complete)."""
    label = f"{route.method} {route.path}"
    operation = document["paths"].get(route.path, {}).get(route.method.lower())
    if operation is None:
        return [f"{label}: MISSING"]
    responses = operation.get("responses", {})
    problems = [
        f"{label}: status {code} not documented (has {sorted(responses)})"
        for code in sorted({route.success, *route.errors})
        if str(code) not in responses
    ]
    for code in sorted(route.errors):
        content = responses.get(str(code), {}).get("content", {})
        if str(code) in responses and "application/json" not in content:
            problems.append(f"{label}: status {code} has no JSON error body")
    if route.body and str(route.success) in responses:
        schema = responses[str(route.success)].get("content", {}).get("application/json", {})
        schema = schema.get("schema", {})
        if route.array:
            schema = schema.get("items", {}) if schema.get("type") == "array" else {}
        if schema.get("$ref") != REF + route.body:
            problems.append(f"{label}: {route.success} body is {_short(schema)}, not {route.body}")
    return problems


def test_every_protocol_route_is_documented_with_its_status_codes(document):
    problems = [p for route in PROTOCOL_ROUTES for p in route_problems(document, route)]
    assert not problems, "PROTOCOL routes vs OpenAPI:\n" + "\n".join(problems)


def test_route_check_reports_a_missing_route():
    assert route_problems({"paths": {}}, PROTOCOL_ROUTES[0]) == ["GET /healthz: MISSING"]
