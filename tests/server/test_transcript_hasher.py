"""The tracer's transcript hasher: a resumed digest equals the whole one, and the
transcripts it holds to resume from stay within its byte budget, most recent first."""

from __future__ import annotations

import msgspec

from backend.server.tracing import TranscriptHasher, digest
from shared_contracts.chat import Message, TextPart
from tests.fakes import FixedClock

AT = FixedClock().now()


def message(n: int, text: str = "") -> Message:
    return Message(
        id=f"m{n}", role="user", turn=n, created_at=AT, parts=[TextPart(text=text or f"t{n}")]
    )


def test_chats_beyond_the_byte_budget_are_dropped_oldest_first_and_still_hash_right():
    hasher = TranscriptHasher()
    one_chat = len(msgspec.json.encode([message(i, "x" * 100) for i in range(10)]))
    hasher.KEEP_BYTES = 3 * one_chat + 10  # room for three such chats
    chats = {f"chat-{c}": [message(i, "x" * 100) for i in range(10)] for c in range(5)}
    for chat_id, messages in chats.items():
        assert hasher.digest(chat_id, messages) == digest(messages)
    assert [c in hasher for c in chats] == [False, False, True, True, True]
    assert 2 * one_chat < hasher.held_bytes <= hasher.KEEP_BYTES
    grown = [*chats["chat-0"], message(10)]  # an evicted chat is hashed whole again
    assert hasher.digest("chat-0", grown) == digest(grown)
    assert "chat-0" in hasher and "chat-2" not in hasher
    assert hasher.held_bytes <= hasher.KEEP_BYTES


def test_a_transcript_bigger_than_the_budget_is_hashed_but_not_held():
    hasher = TranscriptHasher()
    hasher.KEEP_BYTES = 50
    messages = [message(i) for i in range(20)]
    assert hasher.digest("chat-1", messages) == digest(messages)
    assert "chat-1" not in hasher and hasher.held_bytes == 0
