"""Where the API is and how to authenticate, read from the environment at call time."""

from __future__ import annotations

import os

DEFAULT_API_URL = "http://127.0.0.1:8100"
WS_MAX_SIZE = 8 * 1024 * 1024
"""Largest frame the UI accepts: snapshots of long chats can exceed websockets' 1 MiB default."""


def api_url() -> str:
    """The API's base URL without a trailing slash (`LH_API_URL`)."""
    return os.environ.get("LH_API_URL", DEFAULT_API_URL).rstrip("/")


PAGE_MESSAGES = 20
"""A chat opens with its latest this-many messages; "show earlier" loads as many again."""


def ws_url(chat_id: str) -> str:
    """The classroom WebSocket URL for one chat: its snapshot holds the latest page."""
    base = api_url()
    if base.startswith("https://"):
        base = "wss://" + base.removeprefix("https://")
    elif base.startswith("http://"):
        base = "ws://" + base.removeprefix("http://")
    return f"{base}/api/chats/{chat_id}/ws?limit={PAGE_MESSAGES}"


def auth_headers() -> dict[str, str]:
    """`Authorization: Bearer <LH_API_TOKEN>` when a token is set; the token never enters state."""
    token = os.environ.get("LH_API_TOKEN", "").strip()
    return {"Authorization": f"Bearer {token}"} if token else {}
