"""Chats as the routes and the WebSocket see them: created, listed and viewed here, and a
chat's trace read (what a client may see: no answer key of an open question)."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

import msgspec

from backend.core.errors import Busy, NotFound
from backend.core.ids import require_id
from backend.core.pending import find_tool_part, pending_question
from backend.core.ports import ChatStore, Clock, IdGen, MaterialStore, TraceStore, TurnObserver
from backend.core.summaries import chat_summary
from backend.core.trace_views import without_key
from backend.core.views import WHOLE, Page, chat_view
from backend.turn.turns import Turns
from shared_contracts.chat import UNTITLED, ChatMode, ChatRecord, ChatSummary, ChatView
from shared_contracts.trace import AnyTraceEvent

REVIEW_TITLE = "Review"

TITLE_CHARS = 200


class ChatService:
    """Creates and shows chats; the running turn's state comes from `Turns`."""

    def __init__(
        self,
        chats: ChatStore,
        clock: Clock,
        ids: IdGen,
        observer: TurnObserver,
        turns: Turns,
        materials: MaterialStore | None = None,
        *,
        traces: TraceStore | None = None,
    ) -> None:
        self._chats = chats
        self._traces = traces
        self._clock = clock
        self._ids = ids
        self._observer = observer
        self._turns = turns
        self._materials = materials

    async def create(
        self,
        title: str | None = None,
        *,
        mode: ChatMode = "lesson",
        material_id: str | None = None,
    ) -> ChatSummary:
        record = await self.create_record(title, mode=mode, material_id=material_id)
        return chat_summary(record)

    async def create_record(
        self,
        title: str | None = None,
        *,
        mode: ChatMode = "lesson",
        material_id: str | None = None,
    ) -> ChatRecord:
        """A new chat; a review's record says so (a lesson's writes no mode, as before); with
        `material_id` (one of the learner's documents, else `NotFound`) a lesson taught from
        that document, titled after it unless `title` is given."""
        default_title = REVIEW_TITLE if mode == "review" else UNTITLED
        if material_id is not None:
            default_title = await self._material_title(material_id)
        now = self._clock.now()
        record = ChatRecord(
            id=self._ids.new("chat"),
            title=(title or "").strip() or default_title,
            created_at=now,
            updated_at=now,
            model=self._turns.config.model_label,
            mode="review" if mode == "review" else msgspec.UNSET,
            material_id=material_id if material_id is not None else msgspec.UNSET,
        )
        await self._chats.create(record)
        await self._observer.chat_created(record)
        return record

    async def _material_title(self, material_id: str) -> str:
        require_id(material_id, "material id")
        if self._materials is None:
            raise NotFound(f"no material {material_id!r}")
        found = await self._materials.get(material_id)
        return " ".join(found.title.split())[:TITLE_CHARS] or UNTITLED

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

    async def trace(self, chat_id: str) -> list[AnyTraceEvent]:
        """The session's trace; while a question is open, without that question's key
        (`core.trace_views`). Refused while a turn runs: it may be asking a question that
        is not open yet. The record is read after the trace, so it is at least as new."""
        if self._traces is None:
            raise NotFound(f"no trace of chat {chat_id!r} is kept here")
        events = await self._traces.read(chat_id)
        record = await self._chats.get(chat_id)
        if self._turns.is_running(chat_id):
            raise Busy("a turn is running: its trace is available once it ends")
        pending = pending_question(record)
        found = find_tool_part(record, pending.tool_call_id) if pending is not None else None
        return events if found is None else without_key(events, found[2])
