"""A new learner does a whole offline-tutor lesson in a real browser, then sees the graph."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Page, expect

from tests.e2e.verdicts import expect_seen

pytestmark = pytest.mark.browser


async def _wait_dock(page: Page, kind: str) -> None:
    dock = page.locator("#question-dock")
    await expect(dock).to_be_visible()
    await expect(dock).to_have_attribute("data-kind", kind)
    await expect(page.locator("#submit-answer")).to_have_text("Submit")


async def _type_answer(page: Page, text: str) -> None:
    field = page.locator("#answer-input")
    await field.fill(text)
    await field.press("Enter")  # Enter submits


async def test_new_learner_does_a_whole_offline_lesson(servers, page: Page, artifacts):
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda p: frames.append(str(p))))

    await page.goto(servers.ui_url + "/")
    await expect(page.locator("#start-first-session")).to_be_visible()
    await page.screenshot(path=artifacts / "home-empty.png")
    await page.locator("#start-first-session").click()
    await page.wait_for_url(re.compile(r"/chat/[a-z0-9][a-z0-9_-]*$"))
    await expect(page.locator("#connection-status")).to_have_text("Connected")
    await expect(page.locator("#tutor-label")).to_have_text("Offline tutor")
    assert await page.locator(".lh-plan-row").count() == 0

    await page.locator("#composer").fill("Teach me fractions")
    await page.locator("#composer").press("Enter")
    await _wait_dock(page, "short_answer")
    await expect(page.locator("#question-prompt")).to_contain_text("bottom number")
    assert await page.locator(".lh-plan-row").count() >= 3  # the plan tree grew
    await expect(page.locator("#conversation")).to_contain_text("denominator")

    # Reloading mid-question restores the conversation and the pending question.
    await page.reload()
    await _wait_dock(page, "short_answer")
    await expect(page.locator("#question-prompt")).to_contain_text("bottom number")
    await expect(page.locator("#conversation")).to_contain_text("Teach me fractions")

    # 1. short answer: wrong first (verdict with the expected answer), then right.
    await _type_answer(page, "numerator")
    verdict = page.locator("#verdict")
    await expect(verdict).to_contain_text("Not quite")
    await expect(verdict).to_contain_text("Expected")
    await expect(verdict).to_contain_text("denominator")
    await expect_seen(page, ["card: Not quite"])  # once: not in its question's block too
    await _wait_dock(page, "short_answer")
    await _type_answer(page, "denominator")
    await expect(verdict).to_contain_text("Right")
    # The latest verdict in the card; the one before it is history, in the conversation.
    await expect_seen(page, ["conversation: Not quite", "card: Right"])
    await expect(page.locator(".lh-plan-done")).to_have_count(1)

    # 2. the tutor's free-form question, answered with a suggestion chip.
    await _wait_dock(page, "ask_user")
    await page.get_by_role("button", name="A bit unsure").click()
    await expect(page.locator("#answer-input")).to_have_value("A bit unsure")
    await page.locator("#submit-answer").click()

    # 3. numeric, written as a fraction.
    await _wait_dock(page, "numeric")
    await _type_answer(page, "24/2")
    await expect(verdict).to_contain_text("Right")
    await expect(page.locator(".lh-plan-done")).to_have_count(2)

    # 4. multiple choice as radio cards, with a confidence.
    await _wait_dock(page, "multiple_choice")
    await page.locator("#answer-choices [role=radio][value=b]").click()
    await page.get_by_role("radio", name="Sure").click()
    await page.locator("#submit-answer").click()
    await expect(verdict).to_contain_text("Right")
    # The teacher's feedback is markdown: its math renders, no `$` delimiter is left.
    await expect(verdict.locator(".lh-feedback .katex").first).to_be_visible()
    await expect(verdict.locator(".lh-feedback")).not_to_contain_text("$")
    await expect(page.locator(".lh-plan-done")).to_have_count(3)
    # A lesson's worked equation, written on a line of its own, is typeset as display math.
    await expect(page.locator("#conversation .katex-display").first).to_be_visible()
    await expect(page.locator("#question-dock")).to_have_count(0)
    # Job cards: the research note, the diagram as an image, the demo in a locked frame.
    await expect(page.locator(".lh-job")).to_have_count(3)
    demo = page.locator(".lh-job iframe")
    await expect(demo).to_have_count(1)
    assert await demo.get_attribute("sandbox") == "allow-scripts"
    assert (await demo.get_attribute("srcdoc") or "").startswith(
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\';'
    )
    await expect(page.locator('.lh-job img[src^="data:image/svg+xml;base64,"]')).to_have_count(1)
    await page.screenshot(path=artifacts / "classroom.png", full_page=True)

    # Nothing of a quiz key ever reached the browser (Reflex deltas included).
    assert frames, "the Reflex socket carried frames"
    assert not [f for f in frames if '"accepted"' in f or '"explanation"' in f]

    # Reflex's supported API only: serving the lesson printed no deprecation notice.
    assert "deprecated" not in (servers.data_dir.parent / "ui.log").read_text()

    # End the session: extraction runs, home shows the new nodes.
    await page.locator("#end-session").click()
    await page.wait_for_url(re.compile(r"/\?after="))
    await expect(page.locator(".react-flow__node").first).to_be_visible(timeout=60_000)
    assert await page.locator(".react-flow__node").count() >= 3
    await expect(page.locator("#graph-new")).to_be_visible()
    await page.screenshot(path=artifacts / "home-graph.png")
    await page.locator(".react-flow__node").first.click()
    await expect(page.locator("#node-panel")).to_be_visible()
    await expect(page.locator("#node-statement")).not_to_be_empty()
    await page.screenshot(path=artifacts / "home-node-panel.png")
