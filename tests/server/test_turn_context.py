"""The teacher's graph-context block: rendered once per session, and sessions started on
the same graph share one copy of it."""

from __future__ import annotations

from datetime import UTC, datetime

from backend.turn.seams import ContextRequest, TurnSeams
from tests.fakes import FixedClock, MemoryChatStore


def seams_rendering(blocks: list[str]) -> tuple[TurnSeams, list[int]]:
    calls: list[int] = []

    async def render(request: ContextRequest) -> str:
        calls.append(1)
        return "".join(list(blocks[min(len(calls), len(blocks)) - 1]))  # a fresh string

    seams = TurnSeams(MemoryChatStore(), FixedClock(), graph_context=render)
    return seams, calls


def session(chat_id: str) -> ContextRequest:
    return ContextRequest(chat_id, datetime(2026, 1, 1, tzinfo=UTC))


async def test_a_session_keeps_its_block_and_equal_blocks_are_one_object():
    graph_a = "## What the learner knows\n" + "fractions " * 1000
    seams, calls = seams_rendering([graph_a, graph_a, "a changed graph"])
    first = await seams.build_teacher_context(session("chat-1"))
    assert await seams.build_teacher_context(session("chat-1")) is first and len(calls) == 1
    second = await seams.build_teacher_context(session("chat-2"))
    assert second == graph_a and second is first  # equal: shared, not a second copy
    third = await seams.build_teacher_context(session("chat-3"))
    assert third == "a changed graph"
    assert (
        await seams.build_teacher_context(session("chat-1")) is first
    )  # its session's block stays
