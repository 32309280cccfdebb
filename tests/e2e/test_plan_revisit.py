"""The plan tells the truth about what was shown (issue 19 item 8), in a real browser on the
offline tutor: a node the learner missed twice is marked "to revisit" (an icon and a word,
never colour alone) and the highlight moves on with the lesson; axe finds nothing."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Page, expect

from tests.e2e.a11y import axe_violations
from tests.e2e.conftest import Servers

pytestmark = pytest.mark.browser


async def _answer(page: Page, text: str) -> None:
    await expect(page.locator("#question-dock")).to_have_attribute("data-kind", "short_answer")
    await expect(page.locator("#submit-answer")).to_have_text("Submit")
    await page.locator("#answer-input").fill(text)
    await page.locator("#answer-input").press("Enter")


async def test_a_node_missed_twice_is_left_to_revisit(own_data: Servers, page: Page, artifacts):
    await page.goto(own_data.ui_url + "/")
    await page.locator("#start-first-session").click()
    await page.wait_for_url(re.compile(r"/chat/"))
    await page.locator("#composer").fill("Teach me fractions")
    await page.locator("#composer").press("Enter")

    rows = page.locator(".lh-plan-row")
    first = rows.first
    await expect(first).to_have_attribute("aria-current", "step")
    await _answer(page, "numerator")
    await expect(page.locator("#verdict")).to_contain_text("Not quite")
    await _answer(page, "numerator")  # missed twice: the tutor says the answer, moves on

    await expect(first).to_have_attribute("data-status", "revisit")
    await expect(first).to_contain_text("to revisit")
    await expect(first).to_have_attribute("aria-current", "false")
    await expect(first.get_by_label("to revisit")).to_be_visible()  # the icon says it too
    await expect(page.locator(".lh-plan-row[aria-current=step]")).to_have_count(1)
    await expect(rows.nth(1)).to_have_attribute("aria-current", "step")
    await page.screenshot(path=artifacts / "plan-revisit.png")
    assert await axe_violations(page) == []

    # A reload restores the marks from the chat's plan.
    await page.reload()
    await expect(first).to_have_attribute("data-status", "revisit")
    await expect(first).to_contain_text("to revisit")
