"""Chat records encoded message by message, re-encoding only the messages that changed.

A turn writes its chat four or five times, and each write encoded the whole record: once
chats grew to hundreds of turns that was a tenth of the server's time. Records change
copy-on-write, so a message a new record shares with the record last encoded for that
chat is the very same object, and its bytes are the ones encoded then. The bytes are kept
only for a chat that is `open` (a turn is running: the first write of a turn encodes the
whole record once) and only while the record they were encoded for is alive, so a chat
between turns keeps nothing.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import msgspec

from shared_contracts.chat import ChatRecord, Message


class ChatEncoder:
    """`encode(chat_id, record)` → exactly `msgspec.json.encode(record)`."""

    def __init__(self) -> None:
        self._encoder = msgspec.json.Encoder()
        # chat id -> (the record last encoded, its messages' bytes in order)
        self._last: dict[str, tuple[weakref.ref[ChatRecord], list[msgspec.Raw]]] = {}
        self._open: dict[str, int] = {}  # chat id -> holders

    def __len__(self) -> int:
        return len(self._last)

    def open(self, chat_id: str) -> None:
        """Keep this chat's bytes between encodes until the matching `close`."""
        self._open[chat_id] = self._open.get(chat_id, 0) + 1

    def close(self, chat_id: str) -> None:
        left = self._open.pop(chat_id) - 1
        if left:
            self._open[chat_id] = left
        else:
            self._last.pop(chat_id, None)

    def encode(self, chat_id: str, record: ChatRecord) -> bytes:
        encode = self._encoder.encode
        old_messages, old_chunks = self._previous(chat_id)
        shared = len(old_messages)
        chunks: list[msgspec.Raw] = []
        for i, message in enumerate(record.messages):
            if i < shared and old_messages[i] is message:
                chunks.append(old_chunks[i])
            else:
                chunks.append(msgspec.Raw(encode(message)))
        # A Raw is written as it is; Structs do not check their fields' types on replace.
        data = encode(msgspec.structs.replace(record, messages=chunks))
        if chat_id in self._open:
            self._last[chat_id] = (weakref.ref(record, self._dropper(chat_id)), chunks)
        return data

    def _previous(self, chat_id: str) -> tuple[list[Message], list[msgspec.Raw]]:
        last = self._last.get(chat_id)
        if last is None:
            return [], []
        record = last[0]()
        if record is None:  # its messages may be gone and their ids reused: compare nothing
            return [], []
        return record.messages, last[1]

    def _dropper(self, chat_id: str) -> Callable[[weakref.ref[ChatRecord]], None]:
        """Callback: once the record is unreachable, drop its bytes (unless since replaced)."""
        owner = weakref.ref(self)

        def drop(ref: weakref.ref[ChatRecord]) -> None:
            encoder = owner()
            if encoder is not None:
                last = encoder._last.get(chat_id)
                if last is not None and last[0] is ref:
                    del encoder._last[chat_id]

        return drop


def new_messages_only(old: ChatRecord, new: ChatRecord) -> ChatRecord:
    """`new` without the messages it shares with `old` (the very objects: records are
    changed copy-on-write, so an unchanged message is the one `old` already holds)."""
    kept = {id(m) for m in old.messages}
    return msgspec.structs.replace(new, messages=[m for m in new.messages if id(m) not in kept])
