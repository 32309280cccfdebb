"""The app leaves the process's logging as the process set it up (one format for `harness`)."""

from __future__ import annotations

import logging

from tests.fakes import ScriptedModel


def test_starting_the_app_keeps_the_root_handlers_and_litestar_propagates(client_factory):
    root = logging.getLogger()
    before = list(root.handlers)
    client = client_factory(ScriptedModel([]))
    assert client.get("/healthz").status_code == 200
    assert root.handlers == before  # Litestar's default config would put its own in
    assert logging.getLogger("litestar").propagate
