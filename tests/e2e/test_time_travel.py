"""Time travel on home against the real server (issue 19 item 9): `GET /api/graph?as_of=`
in 30 days shows what will be fading if the learner does not review, a past session shows
the graph as it was after it, and Back to now returns; axe finds nothing in the future."""

from __future__ import annotations

import httpx
import pytest
from playwright.async_api import Page, expect

from tests.e2e.a11y import axe_violations
from tests.e2e.conftest import Servers
from tests.lesson_driver import take_lesson

pytestmark = pytest.mark.browser


async def _lesson(api_url: str, topic: str) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as client:
        chat = (await client.post("/api/chats", json={"title": topic})).json()
        ws_url = api_url.replace("http", "ws", 1) + f"/api/chats/{chat['id']}/ws"
        await take_lesson(ws_url, topic)
        (await client.post(f"/api/chats/{chat['id']}/extract")).raise_for_status()


async def _show(page: Page, option: str) -> None:
    await page.locator("#graph-moment").click()
    await page.get_by_role("option", name=option).click()


async def test_home_travels_to_30_days_ahead_and_back(own_data: Servers, page: Page, artifacts):
    await _lesson(own_data.api_url, "Teach me photosynthesis")
    await page.goto(own_data.ui_url + "/")
    graph = page.locator("#graph")
    verified = graph.locator(".react-flow__node", has_text="— verified")
    fading = graph.locator(".react-flow__node", has_text="— fading")
    await expect(verified.first).to_be_visible(timeout=30_000)
    shown_now = await verified.count()
    await expect(fading).to_have_count(0)

    await _show(page, "In 30 days, if you don't review")
    banner = page.locator("#moment-banner")
    await expect(banner).to_contain_text("Your graph in 30 days")
    await expect(banner).to_contain_text("will be fading (0 now)")
    await expect(fading.first).to_be_visible()
    assert await fading.count() + await verified.count() == shown_now  # fading, not gone
    await page.screenshot(path=artifacts / "time-travel-30-days.png")
    assert await axe_violations(page) == []

    await page.locator("#back-to-now").click()
    await expect(banner).to_have_count(0)
    await expect(fading).to_have_count(0)
    await expect(page.locator("#graph-moment")).to_be_focused()

    await _show(page, "After session 1: Teach me photosynthesis")
    await expect(banner).to_contain_text("as it was after session 1")
    await expect(verified).to_have_count(shown_now)
