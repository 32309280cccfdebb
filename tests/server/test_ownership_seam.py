"""The ownership seam holds for every route, present and future: nothing reaches services but
through `backend.server.ownership` (with accounts there is no app-wide `state.services`),
and with `LH_AUTH=accounts` every route but the public ones refuses a request with no
sign-in before its handler runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from litestar.testing import TestClient

from tests.server.accounts_app import accounts_app

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = {
    ("GET", "/healthz"),
    ("POST", "/api/accounts"),
    ("POST", "/api/session"),
}
SEAM = "backend/server/ownership.py"
COMPOSITION = "backend/server/app.py"  # sets `state.services` for local mode's tests


def test_no_route_reaches_services_but_through_the_ownership_seam():
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "backend").rglob("*.py")
        if str(path.relative_to(ROOT)) not in (SEAM, COMPOSITION)
        and re.search(r"state\.services\b", path.read_text("utf-8"))
    ]
    assert not offenders, (
        f"{offenders} read app.state.services: with LH_AUTH=accounts there is none; take the"
        " learner's services from backend.server.ownership (services_of, or owned(request,"
        " kind, id) for a route that names a chat, job or material)"
    )


def _operations(client: TestClient) -> list[tuple[str, str]]:
    schema = client.get("/schema/openapi.json").json()
    found = []
    for path, item in schema["paths"].items():
        for method in item:
            if method in {"get", "post", "put", "patch", "delete"}:
                found.append((method.upper(), re.sub(r"\{[^}]+\}", "x1", path)))
    return found


@pytest.fixture
def client(tmp_path):
    app, _ = accounts_app(tmp_path / "data")
    with TestClient(app=app) as client:
        yield client


def test_every_route_but_the_public_ones_needs_a_sign_in(client):
    operations = _operations(client)
    assert ("GET", "/api/chats") in operations and ("DELETE", "/api/session") in operations
    for method, path in operations:
        if (method, path) in PUBLIC:
            continue
        response = client.request(method, path)
        assert response.status_code == 401, f"{method} {path} answered {response.status_code}"
        assert response.json()["code"] == "not_signed_in"
