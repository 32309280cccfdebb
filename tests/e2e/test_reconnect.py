"""The API going away mid-lesson: the classroom says so by the composer, reconnects on its
own once the API is back, and restores the learner exactly where they were."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Page, expect

from tests.e2e.verdicts import expect_seen

pytestmark = pytest.mark.browser


async def test_a_dropped_api_is_reconnected_and_the_pending_question_restored(servers, page: Page):
    await page.goto(servers.ui_url + "/")
    await page.locator("#new-session").first.click()
    await page.wait_for_url(re.compile(r"/chat/"))
    await expect(page.locator("#connection-status")).to_have_text("Connected")
    await page.locator("#composer").fill("Teach me fractions")
    await page.locator("#composer").press("Enter")
    await expect(page.locator("#question-prompt")).to_contain_text("bottom number")

    servers.stop_api()
    await expect(page.locator("#connection-notice")).to_contain_text("Reconnecting")
    servers.start_api_again()
    await expect(page.locator("#connection-status")).to_have_text("Connected")
    await expect(page.locator("#connection-notice")).to_have_count(0)
    await expect(page.locator("#question-prompt")).to_contain_text("bottom number")
    await expect(page.locator("#conversation")).to_contain_text("Teach me fractions")

    await page.locator("#answer-input").fill("denominator")
    await page.locator("#answer-input").press("Enter")
    await expect(page.locator("#verdict")).to_contain_text("Right")
    await expect_seen(page, ["card: Right"])

    # A reload restores the conversation: the verdict is history there, seen once.
    await page.reload()
    await expect(page.locator("#conversation")).to_contain_text("Teach me fractions")
    await expect_seen(page, ["conversation: Right"])
    await expect(page.locator("#verdict")).to_have_count(0)
