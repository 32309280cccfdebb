"""The tracer's transcript hasher: a resumed digest equals the whole one, it lets go of a
chat's messages once told the chat is idle, and it remembers a bounded number of chats."""

from __future__ import annotations

import sys

from backend.tracing.hashing import TranscriptHasher, digest
from shared_contracts.chat import Message, TextPart
from tests.fakes import FixedClock

AT = FixedClock().now()


def message(n: int) -> Message:
    return Message(id=f"m{n}", role="user", turn=n, created_at=AT, parts=[TextPart(text=f"t{n}")])


def test_a_resumed_digest_equals_the_whole_one_after_appends_and_replacements():
    hasher = TranscriptHasher()
    messages = [message(i) for i in range(10)]
    assert hasher.digest("chat-1", messages) == digest(messages)
    for step in range(12):  # copy-on-write versions, as the chat store makes them
        messages = list(messages)
        if step % 3 == 0:
            messages.append(message(100 + step))
        elif step % 3 == 1:
            messages[-1] = message(200 + step)  # the turn's last message rewritten
        else:
            messages[step % len(messages)] = message(300 + step)  # a job's older message
        assert hasher.digest("chat-1", messages) == digest(messages)


def test_it_lets_go_of_a_forgotten_chat_and_then_hashes_it_whole():
    hasher = TranscriptHasher()
    messages = [message(i) for i in range(10)]
    probe = messages[3]
    alone = sys.getrefcount(probe)
    assert hasher.digest("chat-1", messages) == digest(messages)
    assert sys.getrefcount(probe) == alone + 1  # kept: identity needs the objects alive
    hasher.forget("chat-1")
    assert sys.getrefcount(probe) == alone and "chat-1" not in hasher
    again = [message(i) for i in range(11)]  # equal content, new objects: hashed whole
    assert hasher.digest("chat-1", again) == digest(again)
    again[5] = message(500)  # a replaced message in the middle
    assert hasher.digest("chat-1", again) == digest(again)


def test_chats_beyond_the_limit_are_forgotten_oldest_first_and_still_hash_right():
    hasher = TranscriptHasher()
    hasher.CHATS = 3
    chats = {f"chat-{c}": [message(c * 100 + i) for i in range(5)] for c in range(5)}
    for chat_id, messages in chats.items():
        assert hasher.digest(chat_id, messages) == digest(messages)
    assert [c in hasher for c in chats] == [False, False, True, True, True]
    grown = [*chats["chat-0"], message(9)]
    assert hasher.digest("chat-0", grown) == digest(grown)
    assert "chat-0" in hasher and "chat-2" not in hasher
