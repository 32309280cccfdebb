"""A model reply carrying <script>, <img onerror> and javascript: links executes nothing."""

from __future__ import annotations

import pytest
from playwright.async_api import Page, expect

from tests.e2e.hostile import HOSTILE_CHAT_ID

pytestmark = pytest.mark.browser


async def test_hostile_model_reply_executes_nothing(servers, page: Page, artifacts):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    await page.goto(f"{servers.ui_url}/chat/{HOSTILE_CHAT_ID}")
    conversation = page.locator("#conversation")
    await expect(conversation).to_contain_text("MARKER-END")
    assert await conversation.locator(".katex").count() >= 1  # math still renders
    assert await conversation.locator("script").count() == 0
    assert await conversation.locator("img").count() == 0
    for link in await conversation.locator("a").all():
        href = (await link.get_attribute("href")) or ""
        assert not href.strip().lower().startswith("javascript:")
    link = conversation.get_by_text("click for more")
    if await link.count():
        await link.first.click()
    await page.wait_for_timeout(500)
    assert await page.evaluate("window.__pwned") is None
    assert dialogs == []
    await page.screenshot(path=artifacts / "hostile-reply.png", full_page=True)
