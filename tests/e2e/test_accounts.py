"""`LH_AUTH=accounts` in a real browser: a tab with no sign-in lands on /signin; a learner
signs up, has a lesson over a socket that carries their token, signs out and in again; a
second learner in another browser sees none of the first one's sessions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.e2e.conftest import Servers

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"


@pytest.fixture
def accounts_api(servers: Servers, tmp_path: Path) -> Iterator[Servers]:
    """The session's API with accounts on, over a data dir of its own; as it was after."""
    servers.stop_api()
    servers.start_api_again(LH_AUTH="accounts", LH_DATA_DIR=str(tmp_path / "data"))
    try:
        yield servers
    finally:
        servers.stop_api()
        servers.start_api_again()


async def _sign_up(page: Page, ui_url: str, username: str) -> None:
    await page.goto(ui_url + "/")
    await page.wait_for_url(re.compile(r"/signin$"))
    await page.get_by_role("link", name="Create an account").click()
    await page.wait_for_url(re.compile(r"/signup$"))
    await page.get_by_label("Username").fill(username)
    await page.get_by_label("Password", exact=True).fill(PASSWORD)
    await page.get_by_label("Password again").fill(PASSWORD)
    await page.get_by_role("button", name="Create account").click()
    await page.wait_for_url(re.compile(r"/$"))
    await expect(page.locator("#sign-out")).to_be_visible()


async def _second_page(page: Page) -> Page:
    browser: Browser | None = page.context.browser
    assert browser is not None
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    other = await context.new_page()
    other.set_default_timeout(30_000)
    return other


async def test_two_learners_sign_up_learn_and_see_only_their_own(accounts_api, page: Page):
    ui = accounts_api.ui_url
    await _sign_up(page, ui, "ada")
    await expect(page.get_by_text("ada", exact=True)).to_be_visible()
    await page.locator("#start-first-session").click()
    await page.wait_for_url(re.compile(r"/chat/[a-z0-9][a-z0-9_-]*$"))
    chat_url = page.url
    await expect(page.locator("#connection-status")).to_have_text("Connected")
    await page.locator("#composer").fill("Teach me fractions")
    await page.locator("#composer").press("Enter")
    await expect(page.locator("#question-dock")).to_be_visible()

    bob = await _second_page(page)
    await _sign_up(bob, ui, "bob")
    await expect(bob.get_by_text("No sessions yet.")).to_be_visible()  # none of ada's
    await expect(bob.locator("#chat-list")).to_have_count(0)
    await bob.goto(chat_url)  # ada's session, by its address
    await expect(bob.locator("#connection-status")).not_to_have_text("Connected")
    await expect(bob.locator("#conversation")).not_to_contain_text("Teach me fractions")

    await page.goto(ui + "/")
    await page.locator("#sign-out").click()
    await page.wait_for_url(re.compile(r"/signin$"))
    await page.goto(chat_url)
    await page.wait_for_url(re.compile(r"/signin$"))  # signed out: the room sends here too
    await page.get_by_label("Username").fill("ada")
    await page.get_by_label("Password").fill("wrong password")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("alert")).to_contain_text("Unknown username or wrong password")
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(re.compile(r"/$"))
    chat_path = chat_url.removeprefix(ui)
    await expect(page.locator(f'#chat-list a[href="{chat_path}"]')).to_have_count(1)  # hers again
