"""Prerequisite checks in the plan panel, in a real browser on the offline tutor (issue 19
item 7): a second fractions lesson rests on a prerequisite no session has shown, so the plan
gets a "check first" row saying what needs it and why; the tutor checks it before what
rests on it, and answered right the row is done (a check moved past unprobed, "not
checked", is drawn in tests/ui/test_plan_marks.py). Axe finds nothing."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.async_api import Page, expect

from tests.e2e.a11y import axe_violations
from tests.e2e.conftest import Servers
from tests.lesson_driver import take_lesson

pytestmark = pytest.mark.browser


async def _first_lesson(api_url: str) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as client:
        chat = (await client.post("/api/chats", json={"title": "Fractions"})).json()
        ws_url = api_url.replace("http", "ws", 1) + f"/api/chats/{chat['id']}/ws"
        await take_lesson(ws_url, "Teach me fractions")
        (await client.post(f"/api/chats/{chat['id']}/extract")).raise_for_status()


async def test_a_weak_prerequisite_is_a_check_first_row(own_data: Servers, page: Page, artifacts):
    await _first_lesson(own_data.api_url)
    await page.goto(own_data.ui_url + "/")
    await page.locator("#new-session").first.click()
    await page.wait_for_url(re.compile(r"/chat/"))
    await page.locator("#composer").fill("Teach me fractions")
    await page.locator("#composer").press("Enter")

    check = page.locator(".lh-plan-row", has_text="check first").first
    await expect(check).to_be_visible()
    await expect(check).to_contain_text("Needed for “Equivalent fractions”")
    await expect(check).to_contain_text("no session has shown it yet")
    await expect(check).not_to_contain_text("Check first:")  # the note, not said twice
    await expect(check.get_by_label("check first")).to_be_visible()
    await page.screenshot(path=artifacts / "plan-check-first.png")
    assert await axe_violations(page) == []

    # Before teaching what rests on it, the tutor checks it; answered right, it is done.
    await page.locator("#answer-input").fill("denominator")
    await page.locator("#answer-input").press("Enter")
    await expect(page.locator("#question-dock")).to_have_attribute("data-kind", "ask_user")
    await page.get_by_role("button", name="A bit unsure").click()
    await page.locator("#submit-answer").click()
    await expect(page.locator("#question-dock")).to_have_attribute("data-kind", "numeric")
    await expect(page.locator("#question-prompt")).to_contain_text("6")
    await page.locator("#answer-input").fill("24")
    await page.locator("#answer-input").press("Enter")
    checked = page.locator(".lh-plan-done", has_text="Multiplying and dividing")
    await expect(checked).to_be_visible()
    await expect(checked).not_to_contain_text("check first")
    await expect(checked.get_by_label("done")).to_be_visible()
    await page.locator("#plan-rows").screenshot(path=artifacts / "plan-check-done.png")
