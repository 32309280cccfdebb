"""ChatStore on files: `root/chats/<id>.json`, replaced atomically, updates serialised per chat."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from pathlib import Path

import msgspec

from backend.core.errors import CorruptRecord
from backend.core.summaries import chat_summary
from backend.store.chat_encoding import ChatEncoder, new_messages_only
from backend.store.fileops import FileOps, OsFileOps
from backend.store.record_cache import CHAT_CACHE_BYTES, CacheView
from backend.store.records import RecordDir
from shared_contracts.chat import ChatMode, ChatRecord, ChatSummary


class _SummaryFields(msgspec.Struct, kw_only=True):
    """Just what a summary needs; `messages` stays raw so a listing never decodes them."""

    id: str
    title: str
    created_at: datetime
    updated_at: datetime
    model: str = "offline"
    turns: int = 0
    messages: list[msgspec.Raw] = msgspec.field(default_factory=list)
    material_id: str | msgspec.UnsetType = msgspec.UNSET
    mode: ChatMode = "lesson"


class JsonChatStore:
    """One JSON file per chat; `create` refuses a taken id; `update` never loses a write."""

    def __init__(
        self,
        root: Path,
        fs: FileOps | None = None,
        *,
        cache_bytes: int = CHAT_CACHE_BYTES,
        cache: CacheView[ChatRecord] | None = None,
    ) -> None:
        self._encoder = ChatEncoder()
        self._dir = RecordDir(
            os.path.join(root, "chats"),
            "chat",
            ChatRecord,
            fs or OsFileOps(),
            unverified=new_messages_only,
            encode=self._encoder.encode,
            cache_bytes=cache_bytes,
            cache=cache,
        )
        self._summary = msgspec.json.Decoder(_SummaryFields)

    async def create(self, record: ChatRecord) -> None:
        await self._dir.save(record.id, record, exclusive=True)

    async def get(self, chat_id: str) -> ChatRecord:
        return await self._dir.load(chat_id)

    async def update(self, chat_id: str, mutate: Callable[[ChatRecord], ChatRecord]) -> ChatRecord:
        return await self._dir.update(chat_id, mutate, lambda r: r.id)

    def peek(self, chat_id: str) -> ChatRecord | None:
        """The chat's record as of its last completed write, if in memory; no I/O."""
        return self._dir.latest(chat_id)

    def held(self, chat_id: str) -> AbstractAsyncContextManager[None]:
        """For a learner's open session: the chat's record stays decoded between turns."""
        return self._dir.pinned(chat_id)

    @asynccontextmanager
    async def pinned(self, chat_id: str) -> AsyncIterator[None]:
        """For a running turn: its record stays cached and its writes re-encode only the
        messages they change."""
        async with self._dir.pinned(chat_id):
            self._encoder.open(chat_id)
            try:
                yield
            finally:
                self._encoder.close(chat_id)

    async def list_summaries(self) -> list[ChatSummary]:
        """Every chat, newest first (created_at, then id); a corrupt file raises, naming it."""
        rows = await self._dir.load_all(self._decode_summary)
        rows.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return [chat_summary(r) for r in rows]

    def _decode_summary(self, data: bytes, path: str) -> _SummaryFields:
        try:
            return self._summary.decode(data)
        except msgspec.DecodeError as exc:
            raise CorruptRecord(path, str(exc)) from exc
