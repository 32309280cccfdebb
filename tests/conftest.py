"""Shared test setup. litellm must find its local cost map before anything imports it."""

import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")
os.environ.setdefault("REFLEX_TELEMETRY_ENABLED", "false")


import pytest

from tests.pg_cluster import ClusterError, PgCluster


@pytest.fixture(scope="session")
def pg_cluster():
    """One throwaway PostgreSQL server for the whole session, started on first use; a
    missing server fails the test (with the package to install), never skips it."""
    try:
        cluster = PgCluster().start()
    except ClusterError as exc:
        pytest.fail(str(exc), pytrace=False)
    yield cluster
    cluster.remove()


@pytest.fixture(scope="session")
def pg_url(pg_cluster) -> str:
    """A database shared by the session's tests; each keeps to learners of its own."""
    return pg_cluster.create_database()


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A clean LH_ environment in an empty working directory (no `.env`), LH_DATA_DIR=./data:
    a `harness` command as a newcomer types it."""
    for name in list(os.environ):
        if name.startswith("LH_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LH_DATA_DIR", str(tmp_path / "data"))
    return tmp_path
