"""The Litestar app factory: routes, the WebSocket, guards, errors, lifespan services."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar

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
            yield

    app = Litestar(
        route_handlers=[*ROUTES, chat_socket],
        lifespan=[lifespan],
        guards=[auth_guard],
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        openapi_config=openapi_config(),
        debug=False,
    )
    app.state.settings = settings
    return app
