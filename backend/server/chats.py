"""Chats as the routes and the WebSocket see them: created, listed and viewed here (what
a client may see: no answer key of an open question)."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

import msgspec

from backend.core.ports import ChatStore, Clock, IdGen, TurnObserver
from backend.core.summaries import chat_summary
from backend.core.views import WHOLE, Page, chat_view
from backend.server.turn.turns import Turns
from shared_contracts.chat import UNTITLED, ChatMode, ChatRecord, ChatSummary, ChatView

REVIEW_TITLE = "Review"


class ChatService:
    """Creates and shows chats; the running turn's state comes from `Turns`."""

    def __init__(
        self,
        chats: ChatStore,
        clock: Clock,
        ids: IdGen,
        observer: TurnObserver,
        turns: Turns,
    ) -> None:
        self._chats = chats
        self._clock = clock
        self._ids = ids
        self._observer = observer
        self._turns = turns

    async def create(self, title: str | None = None, *, mode: ChatMode = "lesson") -> ChatSummary:
        record = await self.create_record(title, mode=mode)
        return chat_summary(record)

    async def create_record(
        self, title: str | None = None, *, mode: ChatMode = "lesson"
    ) -> ChatRecord:
        """A new chat; a review's record says so (a lesson's writes no mode, as before)."""
        now = self._clock.now()
        record = ChatRecord(
            id=self._ids.new("chat"),
            title=(title or "").strip() or (REVIEW_TITLE if mode == "review" else UNTITLED),
            created_at=now,
            updated_at=now,
            model=self._turns.config.model_label,
            mode="review" if mode == "review" else msgspec.UNSET,
        )
        await self._chats.create(record)
        await self._observer.chat_created(record)
        return record

    def held(self, chat_id: str) -> AbstractAsyncContextManager[None]:
        """While a learner's session is open: its chat stays decoded (see `ChatStore.held`)."""
        return self._chats.held(chat_id)

    async def record(self, chat_id: str) -> ChatRecord:
        """The chat's record (server side: it holds answer keys)."""
        return await self._chats.get(chat_id)

    async def summaries(self) -> list[ChatSummary]:
        """Every chat, newest first."""
        return await self._chats.list_summaries()

    async def view(self, chat_id: str, page: Page = WHOLE) -> ChatView:
        """`page` of the chat's messages (all by default) as a client may see them."""
        record = await self._chats.get(chat_id)
        return chat_view(
            record,
            offline=self._turns.config.offline,
            turn_running=self._turns.is_running(chat_id),
            page=page,
        )

    def live_view(self, chat_id: str, page: Page = WHOLE) -> ChatView | None:
        """See `Turns.live_view` (no I/O, no await)."""
        return self._turns.live_view(chat_id, page)
