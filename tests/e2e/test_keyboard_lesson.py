"""A whole offline lesson with the keyboard only: focus is always somewhere visible and
useful, every control answers to Tab, Enter, Space and arrows, and a screen reader gets
names, a log for the conversation and a status for the verdict."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Locator, Page, expect

from tests.e2e.conftest import Servers

pytestmark = pytest.mark.browser

FOCUS_RING = """() => { const e = document.activeElement;
  return e.matches(':focus-visible') && getComputedStyle(e).outlineStyle !== 'none'; }"""


async def _focused(target: Locator) -> None:
    """`target` has focus, and the learner can see it."""
    await expect(target).to_be_focused()
    assert await target.page.evaluate(FOCUS_RING), "focus is not visible"


async def _tab_to(page: Page, target: Locator, *, back: bool = False, limit: int = 20) -> None:
    for _ in range(limit):
        await page.keyboard.press("Shift+Tab" if back else "Tab")
        if await target.evaluate("e => e === document.activeElement"):
            return await _focused(target)
    raise AssertionError(f"{target} is not reachable with Tab")


async def _arrow_to(page: Page, key: str, target: Locator) -> None:
    # Radix moves focus a tick after keydown (and a radio card is picked only while the key
    # is still down): hold each key until focus moved, as a person's keystroke lasts.
    for _ in range(6):
        before = await page.evaluate_handle("document.activeElement")
        await page.keyboard.down(key)
        await page.wait_for_function("f => document.activeElement !== f", arg=before)
        await page.keyboard.up(key)
        if await target.evaluate("e => e === document.activeElement"):
            return await _focused(target)
    raise AssertionError(f"{key} never reached {target}")


async def _dock(page: Page, kind: str) -> None:
    await expect(page.locator("#question-dock")).to_have_attribute("data-kind", kind)
    await expect(page.locator("#submit-answer")).to_have_text("Submit")


async def test_a_whole_lesson_with_the_keyboard_only(own_data: Servers, page: Page):
    servers = own_data
    await page.goto(servers.ui_url + "/")
    await _tab_to(page, page.locator("#new-session"))  # in the header, first or not
    await page.keyboard.press("Enter")
    await page.wait_for_url(re.compile(r"/chat/"))
    composer = page.get_by_role("textbox", name="Message to the tutor")
    await _focused(composer)  # the room opens ready to type
    conversation = page.get_by_role("log", name="Conversation")
    await expect(conversation).to_have_attribute("aria-busy", "false")
    verdict = page.get_by_role("status").filter(has=page.locator("#verdict"))
    await expect(page.locator("#verdict-live[role=status]")).to_be_empty()  # there before
    for name in ("Plan", "End session", "Switch light or dark theme"):  # icon-only ones named
        await expect(page.get_by_role("button", name=name, exact=True)).to_be_visible()

    await page.keyboard.type("Teach me fractions")
    await page.keyboard.press("Enter")
    # 1. short answer: the dock takes focus, its field is named by the question.
    await _dock(page, "short_answer")
    answer = page.get_by_role("textbox", name=re.compile("bottom number of a fraction"))
    await _focused(answer)
    await expect(page.get_by_role("form", name="Question")).to_be_visible()
    await page.keyboard.type("numerator")
    await page.keyboard.press("Enter")
    await expect(verdict).to_contain_text("Not quite")
    await _dock(page, "short_answer")  # asked again: focus is still in the field
    await _focused(answer)
    await page.keyboard.type("denominator")
    await page.keyboard.press("Enter")

    # 2. the tutor asks: a suggestion chip fills the answer and hands focus back to it.
    await _dock(page, "ask_user")
    await _focused(page.locator("#answer-input"))
    chips = page.get_by_role("group", name="Suggested answers")
    await _tab_to(page, chips.get_by_role("button", name="A bit unsure"), back=True, limit=3)
    await page.keyboard.press("Enter")
    await _focused(page.locator("#answer-input"))
    await expect(page.locator("#answer-input")).to_have_value("A bit unsure")
    await page.keyboard.press("Enter")

    # 3. numeric.
    await _dock(page, "numeric")
    await _focused(page.locator("#answer-input"))
    await page.keyboard.type("24/2")
    await page.keyboard.press("Enter")
    await expect(verdict).to_contain_text("Right")

    # 4. multiple choice: focus on the first card (named in words, not by KaTeX), arrows
    # move and pick, Tab to the confidence, arrows and Space, Tab to Submit, Enter.
    await _dock(page, "multiple_choice")
    await _focused(page.get_by_role("radio", name="2/6"))
    three_quarters = page.get_by_role("radio", name="3/4")
    await _arrow_to(page, "ArrowDown", three_quarters)
    await expect(three_quarters).to_be_checked()
    await page.keyboard.press("Tab")
    confidence = page.get_by_role("radiogroup", name="How sure are you?")
    await _focused(confidence.get_by_role("radio", name="Not said"))
    await _arrow_to(page, "ArrowRight", confidence.get_by_role("radio", name="Sure"))
    await page.keyboard.press("Space")
    await expect(confidence.get_by_role("radio", name="Sure")).to_be_checked()
    await page.keyboard.press("Tab")
    await _focused(page.locator("#submit-answer"))
    await _tab_to(page, three_quarters, back=True, limit=2)  # back to the picked card
    await page.keyboard.press("Enter")  # Enter submits from the cards too
    await expect(page.locator("#question-dock")).to_have_count(0)
    await expect(verdict).to_contain_text("Right")
    await _focused(composer)  # the dock closed: focus back where the learner types

    # The plan toggle says whether the plan is shown.
    toggle = page.get_by_role("button", name="Plan", exact=True)
    await _tab_to(page, toggle, back=True)
    await page.keyboard.press("Enter")
    await expect(toggle).to_have_attribute("aria-expanded", "false")
    await page.keyboard.press("Space")
    await expect(page.get_by_role("complementary", name="Plan")).to_be_visible()

    # Inside the demo's frame the focused control shows a ring, and Tab leads out again.
    demo = page.locator(".lh-job iframe")
    box = await demo.bounding_box()
    assert box is not None and box["height"] >= 300  # not the browser's default 150 px
    await _tab_to(page, page.locator("#replay-link"))
    await page.keyboard.press("Tab")
    await expect(demo).to_be_focused()
    inside = page.frame_locator(".lh-job iframe").locator(":focus")
    assert await inside.evaluate("e => getComputedStyle(e).outlineStyle") != "none"
    for _ in range(5):
        await page.keyboard.press("Tab")
        if not await demo.evaluate("e => e === document.activeElement"):
            break
    await _focused(composer)
