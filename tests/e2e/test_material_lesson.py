"""A newcomer with no model key adds a Markdown file from home and gets a real lesson from
it; a file that is not a document is refused with a sentence and nothing is added."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from tests.e2e.conftest import Servers
from tests.materials.samples import PLANTS_MD

pytestmark = pytest.mark.browser


async def _choose(page: Page, path: Path) -> None:
    async with page.expect_file_chooser() as chooser:
        await page.locator("#choose-file").click()
    await (await chooser.value).set_files(str(path))


async def test_a_newcomer_uploads_markdown_and_is_taught_from_it(
    own_data: Servers, page: Page, tmp_path: Path, artifacts: Path
):
    notes = tmp_path / "plants.md"
    notes.write_bytes(PLANTS_MD)
    photo = tmp_path / "photo.md"
    photo.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))

    await page.goto(own_data.ui_url + "/")
    await page.locator("#add-material").click()
    await expect(page.locator("#material-list")).to_contain_text("Nothing added yet.")

    await _choose(page, photo)  # named .md, but its bytes are a PNG
    await expect(page.locator("#material-error")).to_contain_text("PNG")
    await expect(page.locator("#material-list")).to_contain_text("Nothing added yet.")

    await _choose(page, notes)
    await expect(page.locator("#material-added")).to_contain_text("How plants feed themselves")
    row = page.locator(".material-row", has_text="How plants feed themselves")
    await expect(row).to_contain_text("Markdown · 1 page")
    await page.screenshot(path=artifacts / "material-added.png")

    await row.locator(".start-lesson").click()
    await page.wait_for_url(re.compile(r"/chat/[a-z0-9][a-z0-9_-]*"))
    await expect(page.locator("#tutor-label")).to_have_text("Offline tutor")
    conversation = page.locator("#conversation")
    await expect(conversation).to_contain_text("Teach me “How plants feed themselves”")
    # A real lesson from the document: its chapters as the plan, its sentences quoted with
    # their page, a question on its words.
    await expect(page.locator(".lh-plan-row", has_text="Leaves and light")).to_be_visible()
    assert await page.locator(".lh-plan-row").count() >= 3
    await expect(conversation).to_contain_text("(page 1)")
    await expect(conversation).to_contain_text("photosynthesis")
    await expect(page.locator("#question-dock")).to_be_visible()
    await page.screenshot(path=artifacts / "material-lesson.png")
