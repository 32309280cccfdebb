"""Canonical hashes: of values (`digest`), model requests, the graph ledgers (a running
hash, `GraphHasher`) and chat transcripts (resumed, `TranscriptHasher`)."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import anyio
import msgspec

from backend.core.ports import GraphStore, LedgerCursor
from shared_contracts.model_io import ModelRequest

CANONICAL = msgspec.json.Encoder(order="sorted")
LEDGERS = ("propositions", "edges", "events", "mappings", "sessions", "audit")


def digest(value: object) -> str:
    """sha256 (32 hex) of the canonical (sorted-keys) msgspec JSON of `value`."""
    return hashlib.sha256(CANONICAL.encode(value)).hexdigest()[:32]


def request_hash(request: ModelRequest) -> str:
    return digest(request)


def to_json(value: object) -> str:
    """Compact msgspec JSON text of `value`."""
    return msgspec.json.encode(value).decode()


class GraphHasher:
    """A running hash and line counts of the graph ledgers (reads only what was appended).

    Once `watch`ing (every append to the store goes through a wrapper that calls
    `changed`), a state with nothing appended since the last one is answered without a
    read: two thread hops a turn fewer."""

    def __init__(self, graph: GraphStore) -> None:
        self._graph = graph
        self._cursor = LedgerCursor()
        self._hashes = {name: hashlib.sha256() for name in LEDGERS}
        self._counts = dict.fromkeys(LEDGERS, 0)
        self._lock = anyio.Lock(fast_acquire=True)
        self._watched = False
        self._dirty = True
        self._last: tuple[dict[str, int], str] | None = None

    def watch(self, store: object) -> None:
        """`store`'s appends now all report `changed` (only if it is the hashed store)."""
        self._watched = self._watched or store is self._graph

    def changed(self) -> None:
        self._dirty = True

    async def state(self) -> tuple[dict[str, int], str]:
        async with self._lock:
            if self._watched and not self._dirty and self._last is not None:
                return dict(self._last[0]), self._last[1]
            self._dirty = False  # before the read: an append landing during it re-dirties
            batch, self._cursor = await self._graph.read_since(self._cursor)
            for name in LEDGERS:
                for line in getattr(batch, name):
                    self._hashes[name].update(CANONICAL.encode(line) + b"\n")
                    self._counts[name] += 1
            whole = hashlib.sha256()
            for name in LEDGERS:
                whole.update(self._hashes[name].digest())
            self._last = (dict(self._counts), whole.hexdigest()[:32])
            return dict(self._counts), self._last[1]


class TranscriptHasher:
    """`digest(messages)` of each chat's transcript, resumed where the last one left off:
    records change copy-on-write, so the messages a transcript shares with the one hashed
    before are the very same objects, and only what follows them is encoded and hashed.
    The value is exactly `digest(messages)` (the canonical JSON array, hashed in pieces).

    It keeps each chat's last hashed messages (a tuple of references: 8 bytes a message,
    the objects being the ones the open chat's record holds anyway), so the identity
    comparison is sound: no compared object can have been freed and its id reused. The
    tracer `forget`s a chat once it is idle (`Tracer.sweep`); at most `CHATS` are kept."""

    KEEP = 4
    """Prefix states kept per chat: a turn appends messages and may replace its last few."""
    CHATS = 512

    def __init__(self) -> None:
        # chat id -> (its last hashed messages, {prefix length: hash state})
        self._chats: OrderedDict[str, tuple[tuple[Any, ...], dict[int, Any]]] = OrderedDict()

    def __contains__(self, chat_id: object) -> bool:
        """Whether the next digest of this chat can resume (it was hashed recently)."""
        return chat_id in self._chats

    def chat_ids(self) -> list[str]:
        return list(self._chats)

    def forget(self, chat_id: str) -> None:
        """Let go of a chat's messages (it is idle): its next digest is hashed whole."""
        self._chats.pop(chat_id, None)

    def digest(self, chat_id: str, messages: Sequence[Any]) -> str:
        start, state, kept = self._resume(chat_id, messages)
        total = len(messages)
        keep_from = total - self.KEEP
        states = {k: v for k, v in kept.items() if k >= keep_from}
        if start >= keep_from:
            states[start] = state.copy()
        encode = CANONICAL.encode
        for i in range(start, total):
            if i:
                state.update(b",")
            state.update(encode(messages[i]))
            if i + 1 >= keep_from:
                states[i + 1] = state.copy()
        self._chats[chat_id] = (tuple(messages), states)
        if len(self._chats) > self.CHATS:
            self._chats.popitem(last=False)
        state.update(b"]")
        return str(state.hexdigest()[:32])

    def _resume(self, chat_id: str, messages: Sequence[Any]) -> tuple[int, Any, dict[int, Any]]:
        """(messages already hashed, the hash state after them, the states kept) for the
        longest prefix `messages` shares with the chat's last hashed transcript."""
        old = self._chats.pop(chat_id, None)
        if old is not None:
            before, states = old
            same = 0
            for earlier, message in zip(before, messages, strict=False):
                if earlier is not message:
                    break
                same += 1
            kept = {k: v for k, v in states.items() if k <= same}
            if kept:
                start = max(kept)
                return start, kept[start].copy(), kept
        return 0, hashlib.sha256(b"["), {}
