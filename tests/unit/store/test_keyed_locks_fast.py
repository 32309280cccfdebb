"""A free key's lock is taken without a pass of the event loop (a store write takes one per
write; under a burst of turns each pass let every other ready task run first), while a
taken key still queues its holders in arrival order."""

from __future__ import annotations

import anyio
import anyio.lowlevel

from backend.store.keyed_locks import KeyedLocks


async def test_a_free_key_is_taken_without_letting_another_task_run() -> None:
    locks, ran = KeyedLocks(), []

    async def other() -> None:
        ran.append("other")

    async with anyio.create_task_group() as tg:
        tg.start_soon(other)  # ready to run at the next loop pass
        async with locks.hold("k"):
            assert ran == []  # no pass yet: the free lock did not yield
        await anyio.lowlevel.checkpoint()
        assert ran == ["other"]


async def test_a_taken_key_still_queues_holders_in_arrival_order() -> None:
    locks, order = KeyedLocks(), []
    release = anyio.Event()

    async def holder(name: str) -> None:
        async with locks.hold("k"):
            order.append(name)
            if name == "a":
                await release.wait()

    async with anyio.create_task_group() as tg:
        for name in ("a", "b", "c"):
            tg.start_soon(holder, name)
            await anyio.lowlevel.checkpoint()
        assert order == ["a"]
        release.set()
    assert order == ["a", "b", "c"]
    assert len(locks) == 0
