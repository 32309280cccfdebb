"""3. Schemathesis against a running API: every check it has (as `--checks all`), positive
and negative inputs, bounded and deterministic. Driven through Hypothesis directly (schemathesis'
lazy pytest loader does not run under pytest 9)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS, load_all_checks

from tests.contract.live import LiveServer, live_server
from tests.contract.routes import OPENAPI_PATH, PROTOCOL_ROUTES, Route

EXAMPLES_PER_OPERATION = 25
"""Per operation and mode; about 15 runs x 25 requests keeps this near 10 s."""

load_all_checks()
ALL_CHECKS = CHECKS.get_all()
CONFIG = Path(__file__).with_name("schemathesis.toml")
"""The upload's content-dependent answers (413/415/422 for a schema-valid body)."""
CONTENT_CHECKED = {("POST", "/api/materials")}
"""Every check of the pinned Schemathesis (pyproject's dev extra), not only the defaults."""


@pytest.fixture(scope="module")
def api(tmp_path_factory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("schemathesis") / "data") as server:
        yield server


@pytest.fixture(scope="module")
def api_schema(api: LiveServer):
    return schemathesis.openapi.from_url(api.http + OPENAPI_PATH)


@pytest.fixture(scope="module")
def session() -> Iterator[requests.Session]:
    with requests.Session() as http:
        yield http


def test_every_documented_operation_is_a_protocol_route(api_schema):
    """Schemathesis only exercises PROTOCOL routes: a new route must be added there first."""
    known = {(r.method, r.path) for r in PROTOCOL_ROUTES}
    documented = {
        (result.ok().method.upper(), result.ok().path) for result in api_schema.get_all_operations()
    }
    assert documented <= known, f"routes missing from PROTOCOL.md: {sorted(documented - known)}"


RUNS = [
    pytest.param(route, mode, id=f"{route.method} {route.path} {mode.value}")
    for route in PROTOCOL_ROUTES
    for mode in GenerationMode
    # Negative data needs something to break: a path id or a body.
    if mode is GenerationMode.POSITIVE or route.has_inputs
]


@pytest.mark.parametrize(("route", "mode"), RUNS)
def test_api_conforms_to_its_openapi_document(api_schema, session, route: Route, mode):
    try:
        operation = api_schema[route.path][route.method]
    except KeyError:
        pytest.fail(f"{route.method} {route.path} is not in the OpenAPI document")

    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case) -> None:
        case.call_and_validate(session=session, checks=checks)

    checks = ALL_CHECKS
    if (route.method, route.path) in CONTENT_CHECKED:  # see CONFIG
        checks = [c for c in ALL_CHECKS if c.__name__ != "positive_data_acceptance"]

    try:
        run()
    except Unsatisfiable:
        if mode is GenerationMode.POSITIVE:
            raise
        pytest.fail(
            f"{route.method} {route.path}: the document leaves nothing invalid to send; "
            "declare the PROTOCOL id pattern on its path parameter"
        )


def test_the_schemathesis_cli_with_every_check_finds_nothing(api: LiveServer, tmp_path: Path):
    """`schemathesis run --checks all` as a user runs it: all four phases (examples, the
    coverage phase's undeclared methods and missing bodies, fuzzing, stateful links),
    deterministic and bounded (about 5 s)."""
    cli = Path(sys.executable).with_name("schemathesis")
    done = subprocess.run(
        [
            str(cli),
            "--config-file",
            str(CONFIG),
            "run",
            api.http + OPENAPI_PATH,
            "--checks",
            "all",
            "--max-examples",
            "20",
            "--generation-deterministic",
            "--workers",
            "1",
            "--no-color",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,  # its cache (`.schemathesis/`) stays out of the checkout
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
