"""Where the API is and how to authenticate, read from the environment at call time, and
(with `LH_AUTH=accounts`) the signed-in learner's token of the browser tab being served."""

from __future__ import annotations

import os

from reflex_base.event.context import EventContext

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


SIGNED_IN: dict[str, str] = {}
"""A Reflex client token (one browser tab) → the API token its learner signed in with.
Kept in this process only: never a state var (those reach the browser, or `.states/`)."""


def tab_token() -> str | None:
    """The Reflex client token of the event being handled (None outside an event)."""
    try:
        return EventContext.get().token
    except LookupError:
        return None


def auth_headers() -> dict[str, str]:
    """`Authorization: Bearer <token>`: the tab's signed-in learner's, else `LH_API_TOKEN`
    when one is set, else nothing. No token ever enters state."""
    tab = tab_token()
    token = SIGNED_IN.get(tab, "") if tab else ""
    token = token or os.environ.get("LH_API_TOKEN", "").strip()
    return {"Authorization": f"Bearer {token}"} if token else {}
