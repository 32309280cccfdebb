"""A classroom's socket to the API lives as long as its tab shows the classroom: leaving
for home, or closing the tab, hangs it up (the UI server holds no socket for nobody)."""

from __future__ import annotations

import asyncio
import re

import httpx
import psutil
import pytest
from playwright.async_api import Page, expect

from tests.e2e.conftest import Servers

pytestmark = pytest.mark.browser


def sockets_to(api_url: str) -> int:
    """Open TCP connections to the API's port (every client of it here is the UI server)."""
    port = int(api_url.rsplit(":", 1)[1])
    return sum(
        1
        for c in psutil.net_connections(kind="tcp")
        if c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
    )


async def until_sockets(api_url: str, count: int, seconds: float = 15) -> int:
    for _ in range(int(seconds * 10)):
        if (now := sockets_to(api_url)) == count:
            return now
        await asyncio.sleep(0.1)
    return sockets_to(api_url)


async def _open_classroom(page: Page, servers: Servers) -> None:
    async with httpx.AsyncClient(base_url=servers.api_url, timeout=10) as client:
        chat = (await client.post("/api/chats", json={})).json()
    await page.goto(f"{servers.ui_url}/chat/{chat['id']}")
    await expect(page.locator("#connection-status")).to_have_text("Connected")
    assert await until_sockets(servers.api_url, 1) == 1


async def test_leaving_the_classroom_hangs_up_its_socket(servers: Servers, page: Page):
    await _open_classroom(page, servers)
    await page.get_by_role("link", name="My graph").click()
    await page.wait_for_url(re.compile(r"/$"))
    assert await until_sockets(servers.api_url, 0) == 0


async def test_closing_the_tab_hangs_up_its_socket(servers: Servers, page: Page):
    await _open_classroom(page, servers)
    await page.close()
    assert await until_sockets(servers.api_url, 0) == 0
