"""The Litestar app factory: routes, the WebSocket, guards, errors, lifespan services."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from litestar import Litestar
from litestar.logging.config import LoggingConfig

from backend.server.errors import EXCEPTION_HANDLERS
from backend.server.openapi import openapi_config
from backend.server.routes import ROUTES
from backend.server.security import auth_guard
from backend.server.services import open_services
from backend.server.settings import Settings, load_settings
from backend.server.ws import chat_socket


def create_app(settings: Settings | None = None, **overrides: Any) -> Litestar:
    """`overrides` go to `open_services` (tests inject models, clocks, ids, stores)."""
    settings = settings or load_settings()

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        async with open_services(settings, **overrides) as services:
            app.state.services = services
            with startup_heap_frozen():
                yield

    app = Litestar(
        route_handlers=[*ROUTES, chat_socket],
        lifespan=[lifespan],
        guards=[auth_guard],
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=openapi_config(),
        # Litestar would replace the root logger's handler with its own format: its logger
        # propagates to whatever the process configured (`harness` sets one format).
        logging_config=LoggingConfig(
            configure_root_logger=False,
            loggers={"litestar": {"level": "INFO", "propagate": True, "handlers": []}},
        ),
        debug=False,
    )
    app.state.settings = settings
    return app


@contextmanager
def startup_heap_frozen() -> Iterator[None]:
    """While the app serves, what exists once it has started (imports, routes, services,
    the chats read at start-up) sits in the collector's permanent generation: a full
    collection scans only what serving made since (≈ 60 ms over ≈ 100k objects every few
    bursts of turns before). Refcounting still frees frozen objects; unfrozen at shutdown
    so a process that builds apps again (tests) keeps no cycle out of reach."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
