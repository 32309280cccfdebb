"""The four seams of a turn, each a named, error-contained function.

1. `build_teacher_context` — the graph read channel; a read error yields no block.
2. `persist_turn` — the canonical state write; a storage failure becomes a typed error.
3. `spawn_turn_jobs` — background research / demo / visual runs for new job tool parts.
4. `trigger_extraction` — the graph write channel (single-flight per chat, elsewhere).

A failing seam logs one `[chat <id>]` line and never breaks the lesson.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

import anyio
import msgspec

from backend.core.errors import HarnessError, StorageError
from backend.core.ports import ChatStore, Clock
from backend.core.record_ops import update_tool_part, upsert_message
from shared_contracts.chat import ChatRecord, Message, ToolPart
from shared_contracts.tools import JOB_TOOLS

log = logging.getLogger("harness.turn")


class JobSpawner(Protocol):
    """Starts a background job for a job tool part; returns the job id."""

    async def spawn(self, chat_id: str, part: ToolPart) -> str: ...


@dataclass
class TurnSeams:
    chats: ChatStore
    clock: Clock
    graph_context: Callable[[], Awaitable[str]] | None = None
    jobs: JobSpawner | None = None
    extraction: Callable[[str], Awaitable[object]] | None = None
    contexts: OrderedDict[str, str] = field(default_factory=OrderedDict)
    """Each chat's context block, rendered once at session start (most recent chats kept)."""


CONTEXTS_KEPT = 256


async def build_teacher_context(seams: TurnSeams, chat_id: str) -> str:
    """The graph as it stood when the session started: rendered at the chat's first turn
    (in this process) and reused, so the teacher's instructions stay stable all session.
    A read failure yields no block and is retried at the next turn."""
    if seams.graph_context is None:
        return ""
    cached = seams.contexts.get(chat_id)
    if cached is not None:
        seams.contexts.move_to_end(chat_id)
        return cached
    try:
        with anyio.CancelScope(shield=True):  # an abort lands after it (see `tracing`)
            block = await seams.graph_context()
    except Exception as exc:
        log.warning("[chat %s] build_teacher_context failed: %s", chat_id, exc)
        return ""
    if seams.contexts and block == (latest := next(reversed(seams.contexts.values()))):
        block = latest  # sessions started on the same graph share one copy of the block
    seams.contexts[chat_id] = block
    if len(seams.contexts) > CONTEXTS_KEPT:
        seams.contexts.popitem(last=False)
    return block


async def persist_turn(seams: TurnSeams, chat_id: str, message: Message) -> ChatRecord:
    now = seams.clock.now()
    try:
        return await seams.chats.update(chat_id, lambda r: upsert_message(r, message, now))
    except HarnessError as exc:
        log.error("[chat %s] persist_turn failed: %s", chat_id, exc)
        raise
    except OSError as exc:
        log.error("[chat %s] persist_turn failed: %s", chat_id, exc)
        raise StorageError(f"could not save the chat: {exc.strerror or exc}") from exc


async def spawn_turn_jobs(seams: TurnSeams, chat_id: str, message: Message) -> None:
    for part in message.parts:
        if not (
            isinstance(part, ToolPart)
            and part.tool_name in JOB_TOOLS
            and part.state == "input-available"
            and part.job_id is None
        ):
            continue
        try:
            if seams.jobs is None:
                raise HarnessError("background jobs are not configured on this server")
            with anyio.CancelScope(shield=True):  # an abort lands after it, not halfway
                await seams.jobs.spawn(chat_id, part)
        except Exception as exc:
            log.warning(
                "[chat %s] spawn_turn_jobs failed for %s: %s", chat_id, part.tool_call_id, exc
            )
            failed = msgspec.structs.replace(
                part, state="output-error", error=f"could not start the job: {exc}"
            )
            now = seams.clock.now()
            try:
                await seams.chats.update(
                    chat_id, lambda r, p=failed, t=now: update_tool_part(r, p, t) or r
                )
            except Exception as inner:
                log.warning("[chat %s] could not record the failed job: %s", chat_id, inner)


async def trigger_extraction(seams: TurnSeams, chat_id: str) -> None:
    if seams.extraction is None:
        return
    try:
        await seams.extraction(chat_id)
    except Exception as exc:
        log.warning("[chat %s] trigger_extraction failed: %s", chat_id, exc)
