"""What verdicts a learner sees on the classroom page: each once, the latest in the card."""

from __future__ import annotations

import json

from playwright.async_api import Page

SEEN = """() => [...document.querySelectorAll('.lh-verdict')]
    .filter(e => (e.closest('.lh-inline-verdict') ?? e).getBoundingClientRect().width > 1)
    .map(e => (e.closest('#verdict') ? 'card: ' : 'conversation: ')
        + e.firstElementChild.innerText.trim())"""
"""Every verdict drawn in sight, in page order: the block a question leaves its latest
verdict to the card in is clipped to 1 px (still in the log for a screen reader)."""


async def seen_verdicts(page: Page) -> list[str]:
    return await page.evaluate(SEEN)


async def expect_seen(page: Page, expected: list[str]) -> None:
    """Waits until the page shows exactly `expected` (e.g. ["conversation: Not quite",
    "card: Right"]): a verdict's card and its question's block are drawn by one delta."""
    try:
        await page.wait_for_function(
            f"({SEEN})().join('|') === {json.dumps('|'.join(expected))}", timeout=15_000
        )
    except Exception:
        assert await seen_verdicts(page) == expected
        raise
