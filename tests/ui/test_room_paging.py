"""A long chat opens at its latest page: the room counts what comes before, "show earlier"
prepends a page, and a reconnect's snapshot keeps what was already loaded."""

from __future__ import annotations

from shared_contracts.chat import Message, TextPart
from shared_contracts.frames import Snapshot
from tests.ui.samples import AT, chat_view
from ui.model.render import earlier, project
from ui.model.room import (
    Room,
    apply_frame,
    earlier_cursor,
    earlier_failed,
    earlier_requested,
    with_earlier,
)


def _messages(first: int, last: int) -> list[Message]:
    return [
        Message(
            id=f"m{i}",
            role="user" if i % 2 else "assistant",
            turn=(i + 1) // 2,
            created_at=AT,
            parts=[TextPart(text=f"text {i}")],
        )
        for i in range(first, last + 1)
    ]


def _ids(room: Room) -> list[str]:
    return [m.id for m in room.messages]


def _opened(first: int, last: int, earlier_count: int) -> Room:
    view = chat_view(messages=_messages(first, last), earlier=earlier_count, pending_question=None)
    return apply_frame(Room(), Snapshot(chat=view))


def test_a_latest_page_counts_what_comes_before_it_and_offers_it():
    room = _opened(41, 60, 40)
    assert room.earlier == 40 and earlier_cursor(room) == "m41"
    shown = earlier(room)
    assert shown.count == 40 and "40 more messages" in shown.label and not shown.loading
    assert project(room).earlier == shown
    whole = _opened(1, 20, 0)
    assert earlier_cursor(whole) == "" and earlier(whole).count == 0


def test_show_earlier_prepends_the_page_before_and_skips_repeats():
    room = earlier_requested(_opened(41, 60, 40))
    assert earlier(room).loading
    page = chat_view(messages=_messages(21, 41), earlier=20, pending_question=None)
    room = with_earlier(room, page)
    assert _ids(room) == [f"m{i}" for i in range(21, 61)]
    assert room.earlier == 20 and not room.loading_earlier and earlier_cursor(room) == "m21"
    first = chat_view(messages=_messages(1, 20), earlier=0, pending_question=None)
    room = with_earlier(room, first)
    assert _ids(room)[0] == "m1" and len(room.messages) == 60 and earlier_cursor(room) == ""


def test_a_failed_page_says_so_and_lets_the_learner_try_again():
    room = earlier_failed(earlier_requested(_opened(41, 60, 40)), "Could not load: API down")
    assert not room.loading_earlier and room.errors[-1] == "Could not load: API down"
    assert earlier_cursor(room) == "m41"


def test_a_reconnect_keeps_the_earlier_pages_already_loaded():
    room = with_earlier(
        _opened(41, 60, 40),
        chat_view(messages=_messages(21, 40), earlier=20, pending_question=None),
    )
    # The chat grew by two messages while the socket was down: the snapshot's page moved.
    grown = chat_view(messages=_messages(43, 62), earlier=42, pending_question=None)
    room = apply_frame(room, Snapshot(chat=grown))
    assert _ids(room) == [f"m{i}" for i in range(21, 63)]
    assert room.earlier == 20
    # A snapshot whose page the room does not reach replaces what it held.
    far = chat_view(messages=_messages(101, 120), earlier=100, pending_question=None)
    room = apply_frame(room, Snapshot(chat=far))
    assert _ids(room)[0] == "m101" and room.earlier == 100
