"""Home's Export menu in a real browser, on the offline tutor: each of the three downloads is
what it says (an archive that passes every import check, an Anki collection with a note per
node, a zipped vault), and an API that cannot answer is one sentence, not a broken page."""

from __future__ import annotations

import io
import sqlite3
import zipfile
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Page, expect
from playwright.async_api import TimeoutError as PlaywrightTimeout

from backend.portability.archive import read_archive
from tests.e2e.conftest import Servers
from tests.portability.helpers import golden_copy

pytestmark = pytest.mark.browser


@pytest.fixture
def learner(servers: Servers, tmp_path: Path) -> Iterator[Servers]:
    """The session's API on a copy of a recorded lesson; the shared data dir again after."""
    golden_copy("wrong_answer_reteach", tmp_path / "data")
    servers.stop_api()
    servers.start_api_again(LH_DATA_DIR=str(tmp_path / "data"))
    try:
        yield servers
    finally:
        servers.stop_api()
        servers.start_api_again()


async def _open_menu(page: Page, item: str) -> None:
    """Open the Export menu. A click landing as the page applies the previous export's end
    (the button leaving its loading state) is sometimes taken by the trigger without opening
    the menu (seen 1 run in 3 on an idle machine); a learner clicks again, and so do we —
    once: a menu that does not open on a second click fails."""
    item_shown = page.locator(f"#export-{item}")
    for attempt in range(2):
        await page.locator("#export").click()
        try:
            await item_shown.wait_for(timeout=3_000 if attempt == 0 else 10_000)
            return
        except PlaywrightTimeout:
            if attempt == 1:
                raise


async def _download(page: Page, item: str, into: Path) -> tuple[str, bytes]:
    await _open_menu(page, item)
    async with page.expect_download() as started:
        await page.locator(f"#export-{item}").click()
    download = await started.value
    path = into / download.suggested_filename
    await download.save_as(path)
    return download.suggested_filename, path.read_bytes()


async def test_the_three_exports_download_from_home(learner: Servers, page: Page, tmp_path: Path):
    async with httpx.AsyncClient(base_url=learner.api_url) as api:
        nodes = len((await api.get("/api/graph")).json()["nodes"])
    await page.goto(learner.ui_url + "/")
    await expect(page.locator("#export")).to_be_visible()

    name, archive = await _download(page, "archive", tmp_path)
    assert name.startswith("learning-harness-") and name.endswith(".zip")
    data = read_archive(io.BytesIO(archive))  # every check an import makes
    assert len(data.chats) == 1 and data.traces and len(data.ledgers.propositions) == nodes

    name, deck = await _download(page, "anki", tmp_path)
    assert name.endswith(".apkg")
    with zipfile.ZipFile(io.BytesIO(deck)) as apkg:
        (tmp_path / "collection.anki2").write_bytes(apkg.read("collection.anki2"))
    with closing(sqlite3.connect(tmp_path / "collection.anki2")) as db:
        assert db.execute("SELECT count(*) FROM notes").fetchone() == (nodes,)

    name, notes = await _download(page, "markdown", tmp_path)
    assert name.startswith("learning-harness-notes-")
    with zipfile.ZipFile(io.BytesIO(notes)) as vault:
        assert "Learning Harness/Index.md" in vault.namelist()
    await expect(page.locator("#export-error")).to_have_count(0)


async def test_an_export_the_api_cannot_answer_says_so(learner: Servers, page: Page):
    await page.goto(learner.ui_url + "/")
    await expect(page.locator("#export")).to_be_visible()
    learner.stop_api()
    await page.locator("#export").click()
    await page.locator("#export-archive").click()
    error = page.locator("#export-error")
    await expect(error).to_contain_text("The export did not work: cannot reach the API")
    await expect(page.locator("#export")).to_be_enabled()  # not left busy
    await error.get_by_role("button", name="Dismiss").click()
    await expect(error).to_have_count(0)
