"""A review session on the offline tutor, in a real browser (issue 19 item 4 and its
browser test): after a fractions lesson where the learner called the bottom number the
numerator, home shows "Review (N)" with that mix-up first; Review starts a review session
(the classroom says so); the learner tells the tutor's discriminating question apart from
the wrong belief (saying they are sure), ends the session, and home shows the mix-up
cleared up and the answer in the calibration line. Axe finds no violation on home with the
review list nor in the review session."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.async_api import Page, expect

from shared_contracts.frames import Question
from tests.e2e.a11y import axe_violations
from tests.e2e.conftest import Servers
from tests.lesson_driver import LessonLog, take_lesson

pytestmark = pytest.mark.browser

BELIEF = "thinks the bottom number of a fraction is called the numerator"


def _numerator_first(question: Question, log: LessonLog) -> object:
    """Right everywhere but the first answer, which shows the named belief."""
    q = question.question
    if q.kind == "short_answer":
        return "denominator" if log.verdicts else "numerator"
    if q.kind == "numeric":
        return "12"
    if q.kind == "multiple_choice":
        return "b"
    return q.options[0].text if q.options else "ok"


async def _lesson_with_a_mix_up(api_url: str) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as client:
        chat = (await client.post("/api/chats", json={"title": "Fractions"})).json()
        ws_url = api_url.replace("http", "ws", 1) + f"/api/chats/{chat['id']}/ws"
        await take_lesson(ws_url, "Teach me fractions", pick=_numerator_first)
        (await client.post(f"/api/chats/{chat['id']}/extract")).raise_for_status()


async def _answer_the_discriminating_question(page: Page) -> None:
    """The tutor's question whose wrong option is the belief: pick the other one."""
    dock = page.locator("#question-dock")
    await expect(dock).to_have_attribute("data-kind", "multiple_choice")
    await expect(page.locator("#question-prompt")).to_contain_text("bottom number")
    await page.get_by_role("radio", name=re.compile(r"^denominator", re.I)).click()
    await page.get_by_role("radio", name="Sure", exact=True).click()
    await page.locator("#submit-answer").click()
    await expect(page.locator("#verdict")).to_contain_text("Right")


async def test_a_review_session_clears_up_a_mix_up(own_data: Servers, page: Page, artifacts):
    await _lesson_with_a_mix_up(own_data.api_url)

    await page.goto(own_data.ui_url + "/")
    review = page.locator("#start-review")
    await expect(review).to_have_text(re.compile(r"Review \(\d+\)"), timeout=30_000)
    before = int(re.sub(r"\D", "", await review.inner_text()))
    reasons = page.locator("#review-reasons")
    await expect(reasons.locator("li").first).to_contain_text(BELIEF)
    assert await axe_violations(page) == []

    await review.click()
    await page.wait_for_url(re.compile(r"/chat/"))
    await expect(page.locator("#review-session")).to_contain_text("Review")
    await expect(page.locator("#room-title")).to_contain_text("Review:")
    await expect(page.locator("#conversation")).to_contain_text("Let's review what is due.")
    await _answer_the_discriminating_question(page)
    await page.screenshot(path=artifacts / "review-session.png")
    assert await axe_violations(page) == []

    # On a phone the mark is its icon (its word still read out): the header still fits.
    await page.set_viewport_size({"width": 390, "height": 844})
    await expect(page.locator("#review-session")).to_have_text("Review")
    theme = await page.get_by_role("button", name="Switch light or dark theme").bounding_box()
    assert theme is not None and theme["x"] + theme["width"] <= 390
    assert not await page.evaluate("document.documentElement.scrollWidth > innerWidth")
    await page.set_viewport_size({"width": 1280, "height": 800})

    await page.locator("#end-session").click()
    await page.wait_for_url(re.compile(r"/\?after="))
    mix_up = page.locator("#graph .react-flow__node", has_text=BELIEF)
    await expect(mix_up).to_contain_text("— resolved", timeout=30_000)
    await expect(reasons).not_to_contain_text(BELIEF)  # the side panel, before a node opens
    # the one answer given with how sure the learner was reaches the calibration line
    await expect(page.locator("#calibration")).to_contain_text("1 answer so far")
    assert int(re.sub(r"\D", "", await review.inner_text()) or 0) < before
    await mix_up.click()
    await expect(page.locator("#node-resolved")).to_be_visible()
    await expect(page.locator("#node-panel")).to_contain_text("Cleared up on")
    await expect(page.locator("#node-memory")).to_contain_text("still avoid the mix-up")
    await page.screenshot(path=artifacts / "review-resolved.png")
