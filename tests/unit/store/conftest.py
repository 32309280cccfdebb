"""The store factory every port-contract test runs against: files, then PostgreSQL (the
session's throwaway cluster, `pg_url`)."""

from __future__ import annotations

import pytest

from backend.server.stores import FileStoreFactory, open_store_factory
from tests.unit.store.factories import BACKENDS


@pytest.fixture(params=BACKENDS)
async def factory(request, tmp_path):
    if request.param == "files":
        yield FileStoreFactory(tmp_path / "data")
        return
    async with open_store_factory(tmp_path / "data", request.getfixturevalue("pg_url")) as f:
        yield f
