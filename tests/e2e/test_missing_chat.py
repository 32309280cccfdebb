"""A session address that names no chat says so (its handshake is refused like a bad token)."""

from __future__ import annotations

import pytest
from playwright.async_api import Page, expect

from ui.link import NOT_FOUND

pytestmark = pytest.mark.browser


async def test_a_missing_session_says_it_does_not_exist(servers, page: Page):
    await page.goto(servers.ui_url + "/chat/chat-doesnotexist1")
    await expect(page.locator("#room-error")).to_contain_text(NOT_FOUND)
    await expect(page.locator("#connection-status")).not_to_have_text("Connected")
    await expect(page.get_by_text("LH_API_TOKEN")).to_have_count(0)
