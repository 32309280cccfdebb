"""ChatStore on PostgreSQL: one row per (learner, chat), updates serialised per chat.

An update reads the row `FOR UPDATE`, calls `mutate` once (it may draw ids: it must not
run twice) and writes, in one transaction pipelined into two round trips; an in-process
lock per chat keeps this process's writers in call order before they reach the row lock,
which serialises writers in other processes. A record already in memory is sent for only
if its row's `version` moved, so a turn's reads and writes of its chat cost a round trip,
not a transfer and a decode.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import NamedTuple

import msgspec

from backend.core.errors import AlreadyExists, CorruptRecord, NotFound, StorageError
from backend.core.ids import require_id
from backend.store.chat_encoding import ChatEncoder, new_messages_only
from backend.store.keyed_locks import KeyedLocks
from backend.store.pg.database import Connection, JsonBytes, PgDatabase
from backend.store.record_cache import CHAT_CACHE_BYTES, CacheView, RecordCache
from shared_contracts.chat import ChatRecord, ChatSummary


class RowIdentity(NamedTuple):
    """A chat row as of one write."""

    version: int
    size: int


_INSERT = """
INSERT INTO chats (learner_id, id, version, bytes, title, created_at, updated_at, model,
                   turns, messages, record)
VALUES (%s, %s, 1, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (learner_id, id) DO NOTHING
"""
_READ = """
SELECT version, bytes, CASE WHEN version = %s THEN NULL ELSE record END
FROM chats WHERE learner_id = %s AND id = %s
"""
_UPDATE = """
UPDATE chats SET version = %s, bytes = %s, title = %s, created_at = %s, updated_at = %s,
                 model = %s, turns = %s, messages = %s, record = %s
WHERE learner_id = %s AND id = %s
"""
_SUMMARIES = """
SELECT id, title, created_at, updated_at, model, turns, messages,
       record->>'material_id', record->>'mode'
FROM chats WHERE learner_id = %s ORDER BY created_at DESC, id DESC
"""


class PgChatStore:
    """One learner's chats. `cache` may be shared by every learner's store in a process,
    so the memory budget is one, however many learners (this store's keys are its
    learner's part of it)."""

    def __init__(
        self,
        db: PgDatabase,
        learner_id: str,
        *,
        cache: RecordCache[ChatRecord] | None = None,
        cache_bytes: int = CHAT_CACHE_BYTES,
    ) -> None:
        self._db = db
        self._learner = require_id(learner_id, "learner id")
        shared = cache if cache is not None else RecordCache[ChatRecord](cache_bytes)
        self._cache = CacheView(shared, f"{self._learner}/")
        self._locks = KeyedLocks()
        self._encoder = ChatEncoder()
        self._plain = msgspec.json.Encoder()
        self._decoder = msgspec.json.Decoder(ChatRecord)

    async def create(self, record: ChatRecord) -> None:
        key = self._key(record.id)
        data = self._plain.encode(record)
        stored = self._check(data)
        params = (self._learner, record.id, len(data), *_columns(stored), JsonBytes(data))

        async def insert(conn: Connection) -> int:
            cur = await conn.execute(_INSERT, params)
            return cur.rowcount

        async with self._locks.hold(record.id):
            if await self._db.run(insert, retry=False) == 0:
                raise AlreadyExists(f"chat {record.id!r} already exists")
            self._cache.put(key, RowIdentity(1, len(data)), stored)

    async def get(self, chat_id: str) -> ChatRecord:
        key = self._key(chat_id)
        known = self._cache.entry(key)

        async def read(conn: Connection) -> ChatRecord:
            cur = await conn.execute(_READ, (_version(known), self._learner, chat_id))
            return self._current(chat_id, key, known, await cur.fetchone())

        return await self._db.run(read, retry=True)

    async def update(self, chat_id: str, mutate: Callable[[ChatRecord], ChatRecord]) -> ChatRecord:
        """Read-modify-write in one transaction; `mutate` may not change the id. Returns
        the record as written."""
        key = self._key(chat_id)

        async def write(conn: Connection) -> tuple[ChatRecord, RowIdentity]:
            known = self._cache.entry(key)
            async with conn.pipeline(), conn.transaction():
                cur = await conn.execute(
                    _READ + " FOR UPDATE", (_version(known), self._learner, chat_id)
                )
                row = await cur.fetchone()
                current = self._current(chat_id, key, known, row)
                assert row is not None  # `_current` raised NotFound otherwise
                new = mutate(current)
                if new.id != chat_id:
                    raise StorageError(f"chat {chat_id}: an update may not change the id")
                self._check(self._plain.encode(new_messages_only(current, new)))
                data = self._encoder.encode(chat_id, new)
                identity = RowIdentity(row[0] + 1, len(data))
                await conn.execute(
                    _UPDATE,
                    (*identity, *_columns(new), JsonBytes(data), self._learner, chat_id),
                )
            return new, identity

        async with self._locks.hold(chat_id):
            try:
                new, identity = await self._db.run(write, retry=False)
            except StorageError:
                self._cache.discard(key)  # the write may or may not have landed
                raise
            self._cache.put(key, identity, new)
            return new

    async def list_summaries(self) -> list[ChatSummary]:
        """Every chat, newest first (created_at, then id)."""

        async def read(conn: Connection) -> list[ChatSummary]:
            cur = await conn.execute(_SUMMARIES, (self._learner,))
            return [
                ChatSummary(
                    id=r[0],
                    title=r[1],
                    created_at=r[2],
                    updated_at=r[3],
                    model=r[4],
                    turns=r[5],
                    messages=r[6],
                    material_id=msgspec.UNSET if r[7] is None else r[7],
                    mode=r[8] or "lesson",  # a lesson's record does not write its mode
                )
                for r in await cur.fetchall()
            ]

        return await self._db.run(read, retry=True)

    def peek(self, chat_id: str) -> ChatRecord | None:
        """The chat's record as of its last completed write, if in memory; no I/O."""
        return self._cache.latest(self._key(chat_id))

    @asynccontextmanager
    async def held(self, chat_id: str) -> AsyncIterator[None]:
        """For a learner's open session: the chat's record stays decoded between turns."""
        key = self._key(chat_id)
        self._cache.pin(key)
        try:
            yield
        finally:
            self._cache.unpin(key)

    @asynccontextmanager
    async def pinned(self, chat_id: str) -> AsyncIterator[None]:
        """For a running turn: its record stays cached and its writes re-encode only the
        messages they change."""
        async with self.held(chat_id):
            self._encoder.open(chat_id)
            try:
                yield
            finally:
                self._encoder.close(chat_id)

    def _key(self, chat_id: object) -> str:
        """The cache key; `InvalidId` before anything else happens."""
        return require_id(chat_id, "chat id")

    def _current(
        self,
        chat_id: str,
        key: str,
        known: tuple[object, ChatRecord] | None,
        row: tuple[int, int, bytes | None] | None,
    ) -> ChatRecord:
        if row is None:
            raise NotFound(f"chat {chat_id!r} not found")
        version, size, data = row
        identity = RowIdentity(version, size)
        if data is None and known is not None:
            cached = self._cache.get(key, identity)  # refreshes its recency
            return cached if cached is not None else known[1]
        if data is None:  # pragma: no cover - the row matched a version we do not know
            raise StorageError(f"chat {chat_id}: the database sent no record")
        try:
            record = self._decoder.decode(data)
        except msgspec.DecodeError as exc:
            raise CorruptRecord(f"chats({self._learner}, {chat_id})", str(exc)) from exc
        self._cache.put(key, identity, record)
        return record

    def _check(self, data: bytes) -> ChatRecord:
        """`data` decoded back (what a reader will get); `StorageError` for bytes that
        would not read back (they would poison the row)."""
        try:
            return self._decoder.decode(data)
        except msgspec.DecodeError as exc:
            raise StorageError(f"refusing to write an unreadable chat: {exc}") from exc


def _version(known: tuple[object, ChatRecord] | None) -> int:
    """The version of the record in memory (0: none; versions start at 1)."""
    if known is None or not isinstance(known[0], RowIdentity):
        return 0
    return known[0].version


def _columns(record: ChatRecord) -> tuple[object, ...]:
    """title, created_at, updated_at, model, turns, messages: what a listing reads."""
    return (
        record.title,
        record.created_at,
        record.updated_at,
        record.model,
        record.turns,
        len(record.messages),
    )
