"""The seams of a turn, each a named, error-contained method, and the turn's one door to
the chat store.

1. `build_teacher_context` — the graph read channel; a read error yields no block.
2. `persist` — the canonical state write; a storage failure becomes a typed error.
3. `spawn_jobs` — background research / demo / visual runs for new job tool parts.
4. `trigger_extraction` — the graph write channel (single-flight per chat, elsewhere).

A failing seam logs one `[chat <id>]` line and never breaks the lesson. Every read and
write a turn makes of its chat goes through `read` / `update` / `persist` here.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import anyio
import msgspec

from backend.core.errors import HarnessError, StorageError
from backend.core.ports import ChatStore, Clock
from backend.core.record_ops import update_tool_part, upsert_message
from shared_contracts.chat import ChatMode, ChatRecord, Message, ToolPart
from shared_contracts.graph import GraphSnapshot
from shared_contracts.tools import JOB_TOOLS

log = logging.getLogger("harness.turn")

CONTEXTS_KEPT = 256
"""Chats whose context block stays rendered (the most recently used)."""


@dataclass(frozen=True)
class ContextRequest:
    """What a session's context block is rendered for: its chat, the moment of the turn
    that starts it (the graph as of then; no clock read of its own, so a replay renders the
    same), and the chat's mode (a review gets its due items)."""

    chat_id: str
    as_of: datetime
    mode: ChatMode = "lesson"


@dataclass(frozen=True)
class SessionGraph:
    """What a session keeps of the graph from its start: the teacher's block, and the part
    of the graph its plan is checked against (`prerequisites.at_risk_graph`)."""

    markdown: str
    at_risk: GraphSnapshot | None = None


GraphContext = Callable[[ContextRequest], Awaitable[SessionGraph | str]]
"""Renders the teacher's graph-context block for a session (a bare block: no graph to
check its plan against)."""
ExtractionTrigger = Callable[[str], Awaitable[object]]
"""Counts a chat's unfolded answers and starts an extraction run once enough wait."""


class JobSpawner(Protocol):
    """Starts a background job for a job tool part; returns the job id."""

    async def spawn(self, chat_id: str, part: ToolPart) -> str: ...


class TurnSeams:
    """The seams, with their collaborators given at construction (absent ones do nothing:
    no graph block, no jobs, no extraction)."""

    def __init__(
        self,
        chats: ChatStore,
        clock: Clock,
        *,
        graph_context: GraphContext | None = None,
        jobs: JobSpawner | None = None,
        extraction: ExtractionTrigger | None = None,
    ) -> None:
        self._chats = chats
        self._clock = clock
        self._graph_context = graph_context
        self._jobs = jobs
        self._extraction = extraction
        self._contexts: OrderedDict[str, SessionGraph] = OrderedDict()
        """Each chat's context block, rendered once at session start (most recent kept)."""

    # -- the door to the chat store ---------------------------------------------------

    async def read(self, chat_id: str) -> ChatRecord:
        return await self._chats.get(chat_id)

    async def update(self, chat_id: str, mutate: Callable[[ChatRecord], ChatRecord]) -> ChatRecord:
        return await self._chats.update(chat_id, mutate)

    def pinned(self, chat_id: str) -> AbstractAsyncContextManager[None]:
        return self._chats.pinned(chat_id)

    def peek(self, chat_id: str) -> ChatRecord | None:
        return self._chats.peek(chat_id)

    # -- the seams --------------------------------------------------------------------

    async def build_teacher_context(self, request: ContextRequest) -> str:
        """The graph as it stood when the session started: rendered at the chat's first
        turn (in this process) and reused, so the teacher's instructions stay stable all
        session. A read failure yields no block and is retried at the next turn."""
        if self._graph_context is None:
            return ""
        chat_id = request.chat_id
        contexts = self._contexts
        cached = contexts.get(chat_id)
        if cached is not None:
            contexts.move_to_end(chat_id)
            return cached.markdown
        try:
            with anyio.CancelScope(shield=True):  # an abort lands after it (see `tracing`)
                built = await self._graph_context(request)
        except Exception as exc:
            log.warning("[chat %s] build_teacher_context failed: %s", chat_id, exc)
            return ""
        session = SessionGraph(built) if isinstance(built, str) else built
        if contexts and session.markdown == (latest := next(reversed(contexts.values()))).markdown:
            # sessions started on the same graph share one copy of the block
            session = SessionGraph(latest.markdown, session.at_risk)
        contexts[chat_id] = session
        if len(contexts) > CONTEXTS_KEPT:
            contexts.popitem(last=False)
        return session.markdown

    def session_at_risk(self, chat_id: str) -> GraphSnapshot | None:
        """The graph the session's plan is checked against (None: not known here)."""
        found = self._contexts.get(chat_id)
        return found.at_risk if found is not None else None

    async def persist(self, chat_id: str, message: Message) -> ChatRecord:
        """Write the turn's message into the record (merged with what jobs wrote there)."""
        now = self._clock.now()
        try:
            return await self._chats.update(chat_id, lambda r: upsert_message(r, message, now))
        except HarnessError as exc:
            log.error("[chat %s] persist_turn failed: %s", chat_id, exc)
            raise
        except OSError as exc:
            log.error("[chat %s] persist_turn failed: %s", chat_id, exc)
            raise StorageError(f"could not save the chat: {exc.strerror or exc}") from exc

    async def spawn_jobs(self, chat_id: str, message: Message) -> None:
        """A background job for each new job tool part; one that cannot start is written
        as failed."""
        for part in message.parts:
            if (
                isinstance(part, ToolPart)
                and part.tool_name in JOB_TOOLS
                and part.state == "input-available"
                and part.job_id is None
            ):
                await self._spawn(chat_id, part)

    async def _spawn(self, chat_id: str, part: ToolPart) -> None:
        try:
            if self._jobs is None:
                raise HarnessError("background jobs are not configured on this server")
            with anyio.CancelScope(shield=True):  # an abort lands after it, not halfway
                await self._jobs.spawn(chat_id, part)
        except Exception as exc:
            log.warning(
                "[chat %s] spawn_turn_jobs failed for %s: %s", chat_id, part.tool_call_id, exc
            )
            failed = msgspec.structs.replace(
                part, state="output-error", error=f"could not start the job: {exc}"
            )
            now = self._clock.now()
            try:
                await self._chats.update(chat_id, lambda r: update_tool_part(r, failed, now) or r)
            except Exception as inner:
                log.warning("[chat %s] could not record the failed job: %s", chat_id, inner)

    async def trigger_extraction(self, chat_id: str) -> None:
        if self._extraction is None:
            return
        try:
            await self._extraction(chat_id)
        except Exception as exc:
            log.warning("[chat %s] trigger_extraction failed: %s", chat_id, exc)
