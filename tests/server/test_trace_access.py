"""A recording's chat and graph accesses (`Tracer.accessed`, no context managers) are the
same sync points `Tracer.access` takes: one mark each, counted for the turn, failures
included, the chat's state held while they run, an abort landing right after."""

from __future__ import annotations

import anyio
import pytest

from backend.core.errors import NotFound
from backend.tracing.tracer import Tracer
from backend.tracing.units import entered
from shared_contracts.trace import MarkEvent
from tests.fakes import MemoryChatStore, MemoryTraceStore


def _recorder() -> Tracer:
    return Tracer(MemoryTraceStore(), MemoryChatStore())


async def _read(what: list[str], value: str) -> str:
    what.append(value)
    await anyio.lowlevel.checkpoint()
    return value


async def _fail() -> None:
    raise NotFound("no such chat")


async def test_an_access_is_one_counted_mark_either_way():
    tracer = _recorder()
    seen: list[str] = []
    with entered("c", "turn:1") as scope:
        assert await tracer.order.accessed("c", "read", _read, seen, "x") == "x"
        with pytest.raises(NotFound):
            await tracer.order.accessed("c", "write", _fail)
        async with tracer.order.access("c", "read"):  # the context-manager form, same points
            pass
    marks = [(e.scope, e.mark) for e in tracer.recorder.queued("c") if isinstance(e, MarkEvent)]
    assert marks == [("turn:1", "read"), ("turn:1", "write"), ("turn:1", "read")]
    assert scope.syncs == 3 and seen == ["x"]


async def test_an_access_outside_a_unit_or_of_another_chat_records_nothing():
    tracer = _recorder()
    seen: list[str] = []
    assert await tracer.order.accessed("c", "read", _read, seen, "a") == "a"
    with entered("other", "turn:1") as scope:
        assert await tracer.order.accessed("c", "read", _read, seen, "b") == "b"
    assert seen == ["a", "b"] and scope.syncs == 0 and not tracer.recorder.chats()


async def test_an_access_holds_the_chats_state_and_an_abort_lands_after_it():
    tracer = _recorder()
    order: list[str] = []
    gate = anyio.Event()

    async def slow() -> str:
        order.append("slow in")
        await gate.wait()
        order.append("slow out")
        return "slow"

    async def turn(scope_out: list) -> None:
        with entered("c", "turn:1"):
            with anyio.CancelScope() as cancel:
                scope_out.append(cancel)
                await tracer.order.accessed("c", "write", slow)
                order.append("after the write")  # not reached: the abort lands first

    async def other() -> None:
        with entered("c", "job:1"):
            await tracer.order.accessed("c", "read", _read, order, "job read")

    scopes: list = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(turn, scopes)
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(other)
        await anyio.wait_all_tasks_blocked()
        (cancel,) = scopes
        cancel.cancel()  # the learner's abort, mid-write: the write completes (shielded)
        await anyio.wait_all_tasks_blocked()
        assert order == ["slow in"]  # the job's read waits for the chat's state
        gate.set()
    assert order == ["slow in", "slow out", "job read"]
    assert tracer.units.cut_after("c", "turn:1") == 0  # landed right after its sync point 0
