"""A long chat opens at its latest messages, ready to write in; "Show earlier messages"
brings the rest a page at a time, and the whole record is still there on disk."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import pytest
from playwright.async_api import Page, expect

from shared_contracts.chat import ChatRecord, Message, TextPart
from tests.e2e.conftest import Servers

pytestmark = pytest.mark.browser
CHAT_ID = "long-chat"
MESSAGES = 45
AT = datetime(2026, 1, 1, tzinfo=UTC)


def _record() -> ChatRecord:
    messages = [
        Message(
            id=f"msg-{i:03d}",
            role="user" if i % 2 else "assistant",
            turn=(i + 1) // 2,
            created_at=AT + timedelta(minutes=i),
            parts=[TextPart(text=f"Message number {i} of the long chat.")],
        )
        for i in range(1, MESSAGES + 1)
    ]
    return ChatRecord(
        id=CHAT_ID,
        title="A long chat",
        created_at=AT,
        updated_at=AT + timedelta(minutes=MESSAGES),
        model="offline",
        turns=MESSAGES // 2 + 1,
        messages=messages,
    )


@pytest.fixture
def long_chat(servers: Servers, tmp_path: Path) -> Iterator[Servers]:
    data_dir = tmp_path / "data"
    (data_dir / "chats").mkdir(parents=True)
    (data_dir / "chats" / f"{CHAT_ID}.json").write_bytes(msgspec.json.encode(_record()))
    servers.stop_api()
    servers.start_api_again(LH_DATA_DIR=str(data_dir))
    try:
        yield servers
    finally:
        servers.stop_api()
        servers.start_api_again()


def _said(number: int) -> str:
    return f"Message number {number} of the long chat."


async def test_a_long_chat_opens_at_its_latest_page_and_shows_the_rest_on_request(
    long_chat: Servers, page: Page, tmp_path: Path
):
    await page.goto(f"{long_chat.ui_url}/chat/{CHAT_ID}")
    conversation = page.locator("#conversation")
    await expect(conversation).to_contain_text(_said(MESSAGES))
    await expect(page.locator("#composer")).to_be_enabled()
    await expect(conversation).to_contain_text(_said(26))
    await expect(conversation).not_to_contain_text(_said(25))
    earlier = page.locator("#show-earlier")
    await expect(earlier).to_have_text("Show earlier messages (25 more messages)")

    await earlier.click()
    await expect(conversation).to_contain_text(_said(6))
    await expect(conversation).not_to_contain_text(_said(5))
    await expect(earlier).to_have_text("Show earlier messages (5 more messages)")
    await earlier.click()
    await expect(conversation).to_contain_text(_said(1))
    await expect(earlier).to_have_count(0)
    texts = await conversation.inner_text()
    order = [texts.index(_said(i)) for i in (1, 5, 6, 25, 26, MESSAGES)]
    assert order == sorted(order)  # each page went in before the one after it

    on_disk = msgspec.json.decode(
        (tmp_path / "data" / "chats" / f"{CHAT_ID}.json").read_bytes(), type=ChatRecord
    )
    assert len(on_disk.messages) == MESSAGES  # paging is a view; the record is whole
