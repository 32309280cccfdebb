"""The classroom says when it is a review session (issue 19 item 4): a chat in `review`
mode gets a "Review" mark in the header; a lesson, or a chat from a server that predates
modes (no `mode` in its view), does not."""

from __future__ import annotations

import msgspec

from shared_contracts.chat import ChatView
from shared_contracts.frames import Snapshot
from tests.ui.samples import chat_view
from ui.components.room_header import header
from ui.model.render import project
from ui.model.room import Room, apply_frame


def _status(view: ChatView):
    return project(apply_frame(Room(), Snapshot(chat=view))).status


def test_a_review_chat_is_marked_as_a_review_session():
    assert _status(chat_view(mode="review")).review
    assert not _status(chat_view(mode="lesson")).review


def test_a_chat_view_without_a_mode_is_a_lesson():
    raw = msgspec.to_builtins(chat_view())
    del raw["mode"]
    assert not _status(msgspec.convert(raw, ChatView)).review


def test_a_later_snapshot_carries_the_mode_over_a_reconnect():
    room = apply_frame(Room(), Snapshot(chat=chat_view(mode="review")))
    room = apply_frame(room, Snapshot(chat=chat_view(mode="review", messages=[])))
    assert project(room).status.review


def test_the_header_draws_the_mark_only_for_a_review_session():
    drawn = str(header())
    assert "review-session" in drawn and '?.["review"]?(' in drawn
