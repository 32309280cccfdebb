"""Handshake and request checks Litestar does not do for WebSockets.

- When `LH_API_TOKEN` is set, every HTTP request needs `Authorization: Bearer <token>`
  and every WebSocket connect needs that header or `?token=`.
- With `LH_AUTH=accounts`, every route but the public ones (`/healthz`, `/schema*`,
  signing up and signing in) needs a signed-in learner's token, presented the same ways;
  the guard leaves the learner's id on the connection (`ownership.set_learner`).
- A WebSocket `Origin` must be an allowed UI origin or the API's own host. Browsers always
  send `Origin`, so a connect without one comes from a program, not a page: it is
  accepted only from loopback or with a valid token (a shared one, or a learner's).
Refusals happen before `accept`, so a refused client gets no app frame.
"""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any
from urllib.parse import urlsplit

from litestar.connection import ASGIConnection
from litestar.enums import ScopeType
from litestar.exceptions import NotAuthorizedException, WebSocketException
from litestar.handlers import BaseRouteHandler

from backend.accounts.service import AccountService
from backend.core.errors import NotSignedIn
from backend.server.ownership import set_learner
from backend.server.settings import Settings

Connection = ASGIConnection[Any, Any, Any, Any]
"""Any request or WebSocket (the guards read only its scope, query and app state)."""


def _header(connection: Connection, name: bytes) -> str | None:
    """A request header, read from the raw ASGI scope: `connection.headers` would build a
    parsed copy that stays cached with the connection (~1.5 KB an open WebSocket)."""
    for key, value in connection.scope.get("headers", ()):
        if key == name:  # an ASGI server gives header names in lower case
            return value.decode("latin-1")
    return None


def presented_token(connection: Connection) -> str | None:
    header = _header(connection, b"authorization") or ""
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    if connection.scope["type"] == ScopeType.WEBSOCKET:
        return connection.query_params.get("token")
    return None


def token_ok(settings: Settings, connection: Connection) -> bool:
    if not settings.api_token:
        return True
    presented = presented_token(connection)
    return presented is not None and hmac.compare_digest(
        presented.encode(), settings.api_token.encode()
    )


def _is_loopback(connection: Connection) -> bool:
    client = connection.scope.get("client")
    if not client:
        return False
    try:
        return ipaddress.ip_address(client[0]).is_loopback
    except ValueError:
        return client[0] in {"testclient", "localhost"}


def origin_ok(settings: Settings, connection: Connection) -> bool:
    origin = _header(connection, b"origin")
    if origin is None:
        # a program: on this machine, or proven by a token (checked before this)
        return _is_loopback(connection) or bool(settings.api_token) or settings.auth == "accounts"
    if origin in settings.allowed_origins():
        return True
    host = _header(connection, b"host") or ""
    parts = urlsplit(origin)
    return bool(host) and parts.scheme in {"http", "https"} and parts.netloc == host


PUBLIC = "public"
"""A route handler's `opt` key: reachable without signing in (`LH_AUTH=accounts`)."""


def is_public(connection: Connection, handler: BaseRouteHandler) -> bool:
    return bool(handler.opt.get(PUBLIC)) or connection.scope["path"].startswith("/schema")


async def signed_in(connection: Connection, handler: BaseRouteHandler) -> bool:
    """Whether the connection carries a live sign-in (then its learner is set on it)."""
    if is_public(connection, handler):
        return True
    accounts: AccountService = connection.app.state.accounts
    token = presented_token(connection)
    learner = await accounts.learner_for(token) if token else None
    if learner is None:
        return False
    set_learner(connection, learner)
    return True


async def auth_guard(connection: Connection, handler: BaseRouteHandler) -> None:
    settings: Settings = connection.app.state.settings
    if settings.auth == "accounts":
        ok = await signed_in(connection, handler)
    else:
        ok = token_ok(settings, connection)
    if connection.scope["type"] == ScopeType.WEBSOCKET:
        if not ok:
            raise WebSocketException(detail="missing or wrong token", code=4401)
        if not origin_ok(settings, connection):
            raise WebSocketException(detail="origin not allowed", code=4403)
    elif not ok and settings.auth == "accounts":
        raise NotSignedIn("sign in first: no token, or one that is unknown, expired or signed out")
    elif not ok:
        raise NotAuthorizedException("missing or wrong token")


class SignInCheck:
    """A WebSocket's sign-in (`LH_AUTH=accounts`), checked again before each client frame
    is served: once its token is signed out or expired, the socket closes (4401) instead
    of starting a turn. One session read a frame (frames are rate-limited)."""

    def __init__(self, accounts: AccountService, token: str) -> None:
        self._accounts = accounts
        self._token = token

    async def holds(self) -> bool:
        return await self._accounts.learner_for(self._token) is not None


def sign_in_check(connection: Connection) -> SignInCheck | None:
    """The connection's `SignInCheck` with accounts; None without (nothing to re-check)."""
    settings: Settings = connection.app.state.settings
    token = presented_token(connection)
    if settings.auth != "accounts" or not token:
        return None
    return SignInCheck(connection.app.state.accounts, token)
