"""Fixtures shared by the reliability tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def database(pg_cluster) -> str:
    """A fresh database of the session's throwaway PostgreSQL cluster, for one test."""
    return pg_cluster.create_database()
