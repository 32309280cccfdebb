"""The message-by-message chat encoder writes exactly the plain encoding, re-encodes only
the messages that changed, and keeps nothing for a record nobody holds."""

from __future__ import annotations

import gc

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.store.chat_encoding import ChatEncoder
from backend.store.json_chat_store import JsonChatStore
from shared_contracts.chat import ChatRecord, Message, TextPart, ToolPart
from tests.unit.store.factories import at, chat

# One step of a copy-on-write history: append, replace one message, retitle, or re-read.
steps = st.lists(
    st.tuples(st.sampled_from(["append", "replace", "retitle", "reread"]), st.integers(0, 50)),
    max_size=30,
)


def message(n: int) -> Message:
    parts = [TextPart(text=f'text {n} ü \u2028 "q"')]
    if n % 3 == 0:
        parts.append(ToolPart(tool_call_id=f"call_{n}", tool_name="quiz", state="input-available",
                              input={"q": n, "nested": [1, {"a": None}]}))  # fmt: skip
    return Message(id=f"m{n}", role="assistant", turn=n, created_at=at(n), parts=parts)


def apply(record: ChatRecord, step: str, n: int) -> ChatRecord:
    messages = list(record.messages)
    if step == "append":
        messages.append(message(n))
    elif step == "replace" and messages:
        messages[n % len(messages)] = message(n + 1000)
    elif step == "retitle":
        return msgspec.structs.replace(record, title=f"title {n}", updated_at=at(n))
    elif step == "reread":  # a record decoded again: equal, but no object shared
        return msgspec.json.decode(msgspec.json.encode(record), type=ChatRecord)
    return msgspec.structs.replace(record, messages=messages)


@settings(max_examples=60, deadline=None)
@given(steps)
def test_every_encoding_equals_the_plain_encoding(history):
    encoder = ChatEncoder()
    encoder.open("chat-1")
    record = chat(messages=3)
    assert encoder.encode("chat-1", record) == msgspec.json.encode(record)
    for step, n in history:
        record = apply(record, step, n)
        assert encoder.encode("chat-1", record) == msgspec.json.encode(record)


class CountingEncoder(ChatEncoder):
    """Counts the messages it encodes itself (not reused)."""

    def __init__(self) -> None:
        super().__init__()
        self.encoded = 0
        inner = self._encoder

        class Spy:
            def encode(spy, value):
                if isinstance(value, Message):
                    self.encoded += 1
                return inner.encode(value)

        self._encoder = Spy()  # type: ignore[assignment]


def test_only_changed_messages_are_encoded_again():
    encoder = CountingEncoder()
    encoder.open("chat-1")
    history = [chat(messages=100)]  # each version stays held, as the store's cache holds it
    encoder.encode("chat-1", history[-1])
    assert encoder.encoded == 100
    history.append(apply(apply(history[-1], "append", 200), "append", 201))
    encoder.encode("chat-1", history[-1])
    assert encoder.encoded == 102
    history.append(apply(history[-1], "replace", 5))
    encoder.encode("chat-1", history[-1])
    assert encoder.encoded == 103
    history.append(apply(history[-1], "reread", 0))  # new objects: nothing vouched for
    encoder.encode("chat-1", history[-1])
    assert encoder.encoded == 103 + 102
    history.append(apply(history[-1], "append", 202))
    history[:-1] = []  # the version it encoded last is gone: its bytes went with it
    gc.collect()
    encoder.encode("chat-1", history[-1])
    assert encoder.encoded == 205 + 103


def test_nothing_is_kept_for_a_closed_chat_or_a_record_nobody_holds():
    encoder = ChatEncoder()
    encoder.open("chat-1")
    record = chat(messages=10)
    encoder.encode("chat-1", record)
    encoder.encode("chat-2", chat("chat-2", messages=1))  # not open: nothing kept
    assert len(encoder) == 1
    del record
    gc.collect()
    assert len(encoder) == 0
    record = chat(messages=10)
    encoder.encode("chat-1", record)
    encoder.open("chat-1")  # a second holder
    encoder.close("chat-1")
    assert len(encoder) == 1
    encoder.close("chat-1")  # the last one
    assert len(encoder) == 0


async def test_a_store_keeps_a_chats_bytes_only_while_a_turn_holds_it(tmp_path):
    store = JsonChatStore(tmp_path)
    await store.create(chat(messages=3))
    async with store.pinned("chat-1"):
        for n in range(3):
            await store.update("chat-1", lambda r, n=n: apply(r, "append", 10 + n))
        assert len(store._encoder) == 1
    assert len(store._encoder) == 0
    on_disk = (tmp_path / "chats" / "chat-1.json").read_bytes()
    assert on_disk == msgspec.json.encode(await store.get("chat-1"))
