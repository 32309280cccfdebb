"""A chat's view shows a page of its messages: the latest `limit`, or those before a
message; the plan and the open question are the chat's whatever the page."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backend.core.errors import NotFound
from backend.core.views import Page, chat_view
from shared_contracts.chat import ChatRecord, Message, TextPart

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _record(count: int) -> ChatRecord:
    messages = [
        Message(
            id=f"m{i}",
            role="user" if i % 2 else "assistant",
            turn=(i + 1) // 2,
            created_at=AT,
            parts=[TextPart(text=str(i))],
        )
        for i in range(1, count + 1)
    ]
    return ChatRecord(
        id="c1", title="t", created_at=AT, updated_at=AT, messages=messages, turns=count // 2
    )


def _ids(view) -> list[str]:
    return [m.id for m in view.messages]


def test_the_whole_chat_by_default():
    view = chat_view(_record(5), offline=True)
    assert _ids(view) == ["m1", "m2", "m3", "m4", "m5"] and view.earlier == 0


def test_the_latest_page_and_the_pages_before_it():
    record = _record(45)
    latest = chat_view(record, offline=True, page=Page(limit=20))
    assert _ids(latest) == [f"m{i}" for i in range(26, 46)] and latest.earlier == 25
    before = chat_view(record, offline=True, page=Page(before="m26", limit=20))
    assert _ids(before) == [f"m{i}" for i in range(6, 26)] and before.earlier == 5
    first = chat_view(record, offline=True, page=Page(before="m6", limit=20))
    assert _ids(first) == ["m1", "m2", "m3", "m4", "m5"] and first.earlier == 0
    assert _ids(chat_view(record, offline=True, page=Page(before="m1", limit=20))) == []
    assert chat_view(record, offline=True, page=Page(before="m3")).earlier == 0


def test_a_cursor_that_is_not_a_message_of_the_chat_is_not_found():
    with pytest.raises(NotFound, match="no message m99"):
        chat_view(_record(5), offline=True, page=Page(before="m99", limit=2))
