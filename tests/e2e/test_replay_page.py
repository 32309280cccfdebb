"""A short offline lesson (started by `?ask=`), then its replay: timeline, a model call, prompt."""

from __future__ import annotations

import httpx
import pytest
from playwright.async_api import Page, expect

pytestmark = pytest.mark.browser


async def test_replay_shows_the_timeline_and_a_model_calls_system_prompt(
    servers, page: Page, artifacts
):
    async with httpx.AsyncClient(base_url=servers.api_url) as client:
        chat = await client.post("/api/chats", json={"title": "Practise: fractions"})
    chat_id = chat.json()["id"]

    # The classroom sends `?ask=` once as the learner's first message.
    await page.goto(f"{servers.ui_url}/chat/{chat_id}?ask=Teach%20me%20fractions")
    dock = page.locator("#question-dock")
    await expect(dock).to_have_attribute("data-kind", "short_answer")
    await expect(page.locator("#conversation")).to_contain_text("Teach me fractions")
    await page.locator("#answer-input").fill("denominator")
    await page.locator("#answer-input").press("Enter")
    await expect(page.locator("#verdict")).to_contain_text("Right")
    await expect(dock).to_have_attribute("data-kind", "ask_user")  # the next turn ended
    await page.reload()  # reloading does not send the opening message again
    await expect(page.locator("#conversation")).to_contain_text("Teach me fractions")
    assert await page.locator(".lh-user").count() == 1

    await page.locator("#replay-link").click()
    await page.wait_for_url(f"**/replay/{chat_id}")
    models = page.locator(".lh-replay-row[data-kind=model]")
    await expect(models.first).to_be_visible()
    assert await models.count() >= 2
    await expect(page.locator("#replay-timeline")).to_contain_text("turn:1/teacher#0")

    # Filter chips hide and show a kind.
    await page.locator(".lh-chip[data-kind=model]").click()
    await expect(models).to_have_count(0)
    await page.locator(".lh-chip[data-kind=model]").click()
    await expect(models.first).to_be_visible()

    await models.first.click()
    await expect(page.locator("#replay-detail-title")).to_have_text("turn:1/teacher#0")
    prompt = page.locator("#replay-prompt")
    await expect(prompt).to_contain_text("You are a patient, rigorous tutor")
    assert await prompt.locator("script, img").count() == 0  # text, never HTML
    await expect(page.locator("#replay-detail")).to_contain_text("Response text")
    await expect(page.locator("#replay-state")).to_contain_text("State as of this event")
    await page.screenshot(path=artifacts / "replay.png")

    await page.goto(f"{servers.ui_url}/replay/no-such-chat")
    await expect(page.locator("#replay-problem")).to_contain_text("There is no session")
