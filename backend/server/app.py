"""The Litestar app factory: routes, the WebSocket, guards, errors, lifespan services."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar
from litestar.logging.config import LoggingConfig

from backend.accounts.passwords import Argon2Passwords, Passwords
from backend.accounts.service import AccountService
from backend.core.ports import Clock
from backend.server.account_routes import ACCOUNT_ROUTES
from backend.server.errors import EXCEPTION_HANDLERS
from backend.server.learners import Learners, open_learners
from backend.server.material_routes import materials_router
from backend.server.openapi import openapi_config
from backend.server.routes import ROUTES
from backend.server.runtime import RandomIds, SystemClock, startup_heap_frozen
from backend.server.security import auth_guard
from backend.server.settings import Settings, check_exposure, load_settings
from backend.server.stores import StoreFactory
from backend.server.ws import chat_socket


def create_app(
    settings: Settings | None = None,
    *,
    observe_stores: Callable[[StoreFactory], StoreFactory] | None = None,
    passwords: Passwords | None = None,
    account_clock: Clock | None = None,
    **overrides: Any,
) -> Litestar:
    """`overrides` go to `open_services` (tests inject models, clocks, ids, stores);
    with `LH_AUTH=accounts`, `observe_stores` wraps the learners' store factory (tests count
    store calls), `passwords` replaces the production argon2 parameters, `account_clock`
    the sessions' clock.
    Refuses (`SettingsError`) to serve one learner's data to a network without a token."""
    settings = settings or load_settings()
    check_exposure(settings)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        async with open_learners(settings, observe_stores=observe_stores, **overrides) as learners:
            app.state.learners = learners
            if learners.local is not None:
                app.state.services = learners.local
            else:
                app.state.accounts = await _account_service(
                    settings, learners, passwords, account_clock
                )
            with startup_heap_frozen():
                yield

    app = Litestar(
        # sign-up and sign-in exist only with accounts (local mode's OpenAPI has none)
        route_handlers=[
            *ROUTES,
            *(ACCOUNT_ROUTES if settings.auth == "accounts" else ()),
            materials_router(settings.material_max_bytes),
            chat_socket,
        ],
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


async def _account_service(
    settings: Settings, learners: Learners, passwords: Passwords | None, clock: Clock | None
) -> AccountService:
    assert learners.factory is not None  # accounts always have a store factory
    return await AccountService.open(
        learners.factory.accounts,
        passwords or Argon2Passwords(),
        clock or SystemClock(),
        RandomIds(),
        session_hours=settings.session_hours,
        rate_limits=learners.factory.rate_limits,
    )
