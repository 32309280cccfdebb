"""The bench's client of the public API (PROTOCOL.md): HTTP reads, chats, the session end.

Routes the harness does not have yet answer `NotAvailable` naming the API a score waits
for — never a made-up value. The WebSocket session itself is `session.py`.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx

EXTRACT_SECONDS = 60.0


class NotAvailable(Exception):
    """The harness has no such API yet; `api` names it (e.g. "GET /api/review")."""

    def __init__(self, api: str, detail: str = "") -> None:
        super().__init__(f"not available yet (needs {api})" + (f": {detail}" if detail else ""))
        self.api = api


class HarnessClient:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def create_chat(self, title: str, mode: str | None = None) -> str:
        body: dict[str, Any] = {"title": title}
        if mode is not None:
            body["mode"] = mode
        response = await self.http.post("/api/chats", json=body)
        if mode is not None and response.status_code in (400, 422):
            raise NotAvailable(f'POST /api/chats {{"mode": "{mode}"}}', response.text[:200])
        response.raise_for_status()
        return str(response.json()["id"])

    async def chat(self, chat_id: str) -> dict[str, Any]:
        response = await self.http.get(f"/api/chats/{chat_id}")
        response.raise_for_status()
        return dict(response.json())

    async def graph(self, as_of: str | None = None) -> dict[str, Any]:
        """`GET /api/graph`, as of now or of the ISO moment `as_of`."""
        params = {"as_of": as_of} if as_of is not None else None
        response = await self.http.get("/api/graph", params=params)
        response.raise_for_status()
        return dict(response.json())

    async def review_queue(self) -> dict[str, Any]:
        return await self._optional("/api/review", "GET /api/review")

    async def calibration(self) -> dict[str, Any]:
        return await self._optional("/api/calibration", "GET /api/calibration")

    async def _optional(self, path: str, api: str) -> dict[str, Any]:
        response = await self.http.get(path)
        if response.status_code in (404, 405):
            raise NotAvailable(api)
        response.raise_for_status()
        return dict(response.json())

    async def end_session(self, chat_id: str) -> None:
        """`POST /api/chats/{id}/extract`, then wait until the graph has folded every
        message the chat had when the session ended."""
        messages = len((await self.chat(chat_id))["messages"])
        response = await self.http.post(f"/api/chats/{chat_id}/extract")
        response.raise_for_status()
        with anyio.fail_after(EXTRACT_SECONDS):
            while True:
                sessions = (await self.graph()).get("sessions", [])
                folded = max(
                    (s["folded_at"] for s in sessions if s.get("chat_id") == chat_id), default=0
                )
                if folded >= messages:
                    return
                await anyio.sleep(0.05)
