"""Home after months of learning (1,000 nodes in 100 sessions), in a real browser: it draws
the newest sessions, opens readable on the newest one, and lists only the latest sessions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from playwright.async_api import Page, expect

from bench.synthetic import Sizes, build_graph_dir, chat_record, write_chats
from tests.e2e.conftest import Servers
from ui.model.graph_layout import DRAW_LIMIT

pytestmark = pytest.mark.browser

SESSIONS = 100


@pytest.fixture
def months(servers: Servers, tmp_path: Path) -> Iterator[Servers]:
    """The session's API on a synthetic graph of 1,000 nodes from titled sessions."""
    data_dir = tmp_path / "data"
    build_graph_dir(data_dir, Sizes(1_000, 2_000, 10_000, SESSIONS))
    records = [chat_record(f"chat-{c:05d}", target_bytes=500, quizzes=1) for c in range(SESSIONS)]
    write_chats(
        data_dir, [msgspec.structs.replace(r, title=f"Session {i}") for i, r in enumerate(records)]
    )
    servers.stop_api()
    servers.start_api_again(LH_DATA_DIR=str(data_dir))
    try:
        yield servers
    finally:
        servers.stop_api()
        servers.start_api_again()


async def test_a_months_long_graph_opens_readable_on_its_newest_session(
    months: Servers, page: Page
):
    await page.goto(months.ui_url + "/")
    graph = page.locator("#graph")
    await expect(page.locator("#graph-count")).to_have_text(f"{DRAW_LIMIT} of 1000 shown")
    await expect(page.locator("#graph-capped")).to_contain_text("newest sessions")
    await expect(graph.locator(".react-flow__node.selectable")).to_have_count(DRAW_LIMIT)

    # The first fit is the newest session's block, at a zoom its labels can be read at.
    title = graph.locator(".lh-session-title", has_text="Session 99")
    await expect(title).to_be_in_viewport()
    # Measured in the page: React Flow may redraw the node between two Playwright calls.
    width = await graph.locator(".react-flow__node.selectable").last.evaluate(
        "node => node.getBoundingClientRect().width"
    )
    assert width > 150  # 240 px wide at zoom 1; unreadable < 0.6

    await expect(page.locator("#chat-list").get_by_role("link")).to_have_count(12)
    # By keyboard, the sessions are one key past the filters, not 200 drawn nodes away.
    await page.locator("#graph-search").focus()
    await page.keyboard.press("Tab")
    await page.keyboard.press("Tab")
    await page.keyboard.press("Tab")
    await expect(page.locator("#skip-graph")).to_be_focused()
    await expect(page.locator("#skip-graph")).to_have_text("Skip the graph to your sessions")
    await page.keyboard.press("Enter")
    await expect(page.locator("#side-panel")).to_be_focused()
    for _ in range(13):
        await page.keyboard.press("Tab")
    await expect(page.locator("#chat-list-toggle")).to_be_focused()
    await page.keyboard.press("Enter")
    await expect(page.locator("#chat-list").get_by_role("link")).to_have_count(SESSIONS)
