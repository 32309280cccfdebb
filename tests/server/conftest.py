"""An app on a temp data dir with an injected model, driven by Litestar's test client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar.testing import TestClient

from backend.server.app import create_app
from backend.server.settings import Settings


def make_client(tmp_path: Path, model, **settings) -> TestClient:
    app = create_app(Settings(data_dir=tmp_path / "data", **settings), model=model)
    return TestClient(app=app)


@pytest.fixture
def client_factory(tmp_path: Path) -> Iterator:
    clients: list[TestClient] = []

    def build(model, **settings) -> TestClient:
        client = make_client(tmp_path, model, **settings)
        client.__enter__()
        clients.append(client)
        return client

    yield build
    for client in clients:
        client.__exit__(None, None, None)
