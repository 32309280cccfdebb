"""The tracer's transcript hasher: a resumed digest equals the whole one, it keeps no
message alive, and it remembers a bounded number of chats, most recent first."""

from __future__ import annotations

import gc
import weakref

from backend.server.tracing import TranscriptHasher, digest
from shared_contracts.chat import Message, TextPart
from tests.fakes import FixedClock

AT = FixedClock().now()


def message(n: int) -> Message:
    return Message(id=f"m{n}", role="user", turn=n, created_at=AT, parts=[TextPart(text=f"t{n}")])


def test_it_keeps_no_message_alive_and_hashes_right_once_they_are_gone():
    hasher = TranscriptHasher()
    messages = [message(i) for i in range(10)]
    probe = weakref.ref(messages[3])
    assert hasher.digest("chat-1", messages) == digest(messages)
    del messages
    gc.collect()
    assert probe() is None  # the hasher held it weakly only
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
