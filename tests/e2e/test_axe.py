"""Home and the classroom pass axe-core (4.14, from the pinned npm package) with no
violations: home with a graph and with a node's details open; the classroom with a plan,
job cards, an open question and a verdict."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Page, expect

from tests.e2e.a11y import axe_violations
from tests.e2e.conftest import Servers
from tests.lesson_driver import take_lesson

pytestmark = pytest.mark.browser


@pytest.fixture
def learned(servers: Servers, tmp_path: Path) -> Iterator[Servers]:
    """The session's API on a data dir of its own holding one finished lesson."""
    servers.stop_api()
    servers.start_api_again(LH_DATA_DIR=str(tmp_path / "data"))
    try:
        yield servers
    finally:
        servers.stop_api()
        servers.start_api_again()


async def _lesson(api_url: str, topic: str) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as client:
        chat = (await client.post("/api/chats", json={"title": topic})).json()
        ws_url = api_url.replace("http", "ws", 1) + f"/api/chats/{chat['id']}/ws"
        await take_lesson(ws_url, topic)
        (await client.post(f"/api/chats/{chat['id']}/extract")).raise_for_status()


async def test_home_passes_axe_with_a_graph_and_a_nodes_details(learned: Servers, page: Page):
    await _lesson(learned.api_url, "Teach me fractions")
    await page.goto(learned.ui_url + "/")
    nodes = page.locator("#graph .react-flow__node.selectable")
    await expect(nodes.first).to_be_visible(timeout=30_000)
    assert await axe_violations(page) == []
    await nodes.first.click()
    await expect(page.locator("#node-panel")).to_be_visible()
    assert await axe_violations(page) == []


async def test_the_classroom_passes_axe_with_a_question_and_a_verdict(servers: Servers, page: Page):
    await page.goto(servers.ui_url + "/")
    await page.locator("#new-session").first.click()
    await page.wait_for_url(re.compile(r"/chat/"))
    await expect(page.locator("#connection-status")).to_have_text("Connected")
    assert await axe_violations(page) == []  # an empty classroom
    await page.locator("#composer").fill("Teach me fractions")
    await page.locator("#composer").press("Enter")
    await expect(page.locator("#question-dock")).to_be_visible()
    await expect(page.locator(".lh-job").first).to_be_visible()
    assert await axe_violations(page) == []
    await page.locator("#answer-input").fill("numerator")
    await page.locator("#answer-input").press("Enter")
    await expect(page.locator("#verdict")).to_contain_text("Not quite")
    assert await axe_violations(page) == []
