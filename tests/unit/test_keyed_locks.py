"""`KeyedLocks` and the stores built on it: holders of one key run one at a time in arrival
order, and a key's lock is dropped once no one holds or waits on it (no per-id growth)."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import msgspec

from backend.store.fileops import OsFileOps
from backend.store.jsonl_trace_store import JsonlTraceStore
from backend.store.keyed_locks import KeyedLocks
from backend.store.records import RecordDir
from shared_contracts.trace import InboundFrameEvent


async def test_holders_of_one_key_run_in_arrival_order_and_the_table_empties() -> None:
    locks, order, inside = KeyedLocks(), [], []

    async def holder(name: str) -> None:
        async with locks.hold("k"):
            inside.append(name)
            assert len(inside) == 1  # never two holders at once
            await anyio.sleep(0.01)
            order.append(name)
            inside.remove(name)

    async with anyio.create_task_group() as tg:
        for name in ("a", "b", "c"):
            tg.start_soon(holder, name)
            await anyio.lowlevel.checkpoint()  # arrive in this order
        await anyio.sleep(0.005)
        assert len(locks) == 1  # one lock for the key while it is held and waited on
    assert order == ["a", "b", "c"]
    assert len(locks) == 0


async def test_a_waiter_cancelled_while_waiting_leaves_no_entry_behind() -> None:
    locks = KeyedLocks()
    async with anyio.create_task_group() as tg:
        release = anyio.Event()

        async def first() -> None:
            async with locks.hold("k"):
                await release.wait()

        async def waiter(scope: anyio.CancelScope) -> None:
            with scope:
                async with locks.hold("k"):
                    raise AssertionError("a cancelled waiter never gets the lock")

        tg.start_soon(first)
        await anyio.lowlevel.checkpoint()
        scope = anyio.CancelScope()
        tg.start_soon(waiter, scope)
        await anyio.sleep(0.005)
        scope.cancel()
        await anyio.sleep(0.005)
        assert len(locks) == 1  # still held by `first`
        release.set()
    assert len(locks) == 0
    async with locks.hold("k"):  # a later holder gets a fresh lock
        assert len(locks) == 1


class Item(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    n: int = 0


async def test_record_and_trace_stores_keep_no_lock_per_id_once_idle(tmp_path) -> None:
    records = RecordDir(str(tmp_path / "items"), "item", Item, OsFileOps(), cache_bytes=1 << 20)
    for i in range(20):
        await records.save(f"i{i}", Item(id=f"i{i}"))
        await records.update(f"i{i}", lambda it: msgspec.structs.replace(it, n=1), lambda it: it.id)
    assert (await records.load("i7")).n == 1
    assert len(records._locks) == 0
    traces = JsonlTraceStore(tmp_path)
    for i in range(20):
        await traces.append(f"c{i}", [InboundFrameEvent(seq=0, turn=1, frame="{}")])
    assert len(await traces.read("c3")) == 1
    assert len(traces._locks) == 0
