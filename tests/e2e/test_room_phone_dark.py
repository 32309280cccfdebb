"""The classroom on a phone in dark mode: the title keeps its descenders, the composer's
whole hint shows, a demo page sits on a framed tray with a caption, and research sources
say they open a new tab."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest
from playwright.async_api import Page, expect

from shared_contracts.chat import ChatRecord, Message, TextPart, ToolPart
from shared_contracts.jobs import DemoPage, ResearchNote, Source
from shared_contracts.tools import JobOutput
from tests.e2e.conftest import Servers

pytestmark = pytest.mark.browser
CHAT_ID = "phone-dark"
PLACEHOLDER_FITS = """e => { const text = document.createElement('canvas').getContext('2d');
  text.font = getComputedStyle(e, '::placeholder').font;
  const s = getComputedStyle(e);
  const room = e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  return text.measureText(e.placeholder).width <= room; }"""


def _job(call: str, name: str, result: ResearchNote | DemoPage) -> ToolPart:
    output = JobOutput(job_id=f"job-{call}", status="done", result=result)
    return ToolPart(
        tool_call_id=f"call_{call}",
        tool_name=name,
        state="output-available",
        output=output,
        job_id=f"job-{call}",
    )


def _write_chat(data_dir: Path) -> None:
    """A finished research note with sources and a demo page (light, as most are)."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    note = ResearchNote(
        title="Why a bar",
        body="Scribes wrote the bar from the 12th century.",
        sources=[Source(title="Fraction", url="https://en.wikipedia.org/wiki/Fraction")],
    )
    demo = DemoPage(title="Two bars", html="<p>Move the slider.</p>")
    parts = [TextPart(text="Here you are."), _job("r", "research", note), _job("d", "demo", demo)]
    messages = [
        Message(id="m1", role="user", turn=1, created_at=at, parts=[TextPart(text="hi")]),
        Message(id="m2", role="assistant", turn=1, created_at=at, parts=parts),
    ]
    record = ChatRecord(
        id=CHAT_ID, title="Why a bar", created_at=at, updated_at=at, turns=1, messages=messages
    )
    (data_dir / "chats").mkdir(parents=True, exist_ok=True)
    (data_dir / "chats" / f"{CHAT_ID}.json").write_bytes(msgspec.json.encode(record))


async def test_the_classroom_on_a_phone_in_dark_mode(own_data: Servers, page: Page, tmp_path):
    _write_chat(tmp_path / "data")  # the data dir `own_data` started the API on
    await page.set_viewport_size({"width": 390, "height": 844})
    await page.emulate_media(color_scheme="dark")
    await page.goto(f"{own_data.ui_url}/chat/{CHAT_ID}")
    await expect(page.locator("#connection-status")).to_have_text("Connected")

    # The title keeps its descenders ("Why a bar": the y was cut at the baseline).
    clipped = "e => e.scrollHeight > e.clientHeight"
    assert not await page.locator("#room-title").evaluate(clipped)

    # The composer's hint is whole, not cut mid-word; Send is its icon, named.
    assert await page.locator("#composer").evaluate(PLACEHOLDER_FITS)
    await expect(page.get_by_role("button", name="Send")).to_be_visible()

    # The demo is a captioned figure on a tray of the dark theme, not a bare white box.
    demo = page.get_by_role("figure").filter(has=page.locator("iframe"))
    await expect(demo.locator("figcaption")).to_contain_text("interactive page")
    tray = await demo.evaluate("e => getComputedStyle(e).backgroundColor")
    assert tray not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)"), tray
    await expect(demo.locator("iframe")).to_have_attribute("sandbox", "allow-scripts")

    # A source says, to the eye and to a screen reader, that it opens a new tab.
    source = page.get_by_role("link", name="Fraction (opens in a new tab)")
    await expect(source).to_have_attribute("target", "_blank")
    await expect(source.locator("svg")).to_be_visible()
