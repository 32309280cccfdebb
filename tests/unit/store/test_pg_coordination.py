"""The PostgreSQL coordination adapters, two "processes" (each its own connections) in one
test: claims exclude each other and die with their holder's connection, process locks
wait, and frames published by one reach the other's subscriber, never its own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial

import anyio
import psycopg
import pytest

from backend.core.errors import StorageError
from backend.server.stores import open_coordination_factory
from tests.unit.store.test_port_contracts import new_learner


async def _terminate(url: str, application_name: str) -> int:
    """Cut every connection named `application_name`; returns once they are gone."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cur = await conn.execute(
            "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity"
            " WHERE application_name = %s AND pid <> pg_backend_pid()",
            (application_name,),
        )
        row = await cur.fetchone()
        return int(row[0]) if row else 0


async def taken_within(take: Callable[[], Awaitable[bool]], tries: int = 500) -> bool:
    """Whether `take()` (a claim, a lock's adoption) succeeds: a closed connection's locks
    are released by its server process as it exits, a moment after the client let go
    (tried every 10 ms, 5 s at most)."""
    for _ in range(tries):
        if await take():
            return True
        await anyio.sleep(0.01)
    return False


async def test_a_claim_excludes_the_other_process_until_released(pg_url):
    learner = new_learner()
    async with (
        open_coordination_factory(pg_url) as one,
        open_coordination_factory(pg_url) as two,
    ):
        first, second = one.for_learner(learner).claims, two.for_learner(learner).claims
        assert await first.claim("chat-1")
        assert not await second.claim("chat-1")
        assert await second.claim("chat-2")  # another chat is free
        assert await two.for_learner(new_learner()).claims.claim("chat-1")  # another learner
        assert await second.elsewhere("chat-1") and not await first.elsewhere("chat-1")
        assert not await second.elsewhere("chat-3")
        await first.release("chat-1")
        assert not await second.elsewhere("chat-1")
        assert await second.claim("chat-1")


async def test_a_crashed_holder_leaves_no_claim_behind(pg_url):
    learner = new_learner()
    async with open_coordination_factory(pg_url) as two:
        async with open_coordination_factory(pg_url) as one:
            assert await one.for_learner(learner).claims.claim("chat-1")
            assert not await two.for_learner(learner).claims.claim("chat-1")
        # the holder's connection is gone (as a SIGKILLed worker's is)
        assert await taken_within(partial(two.for_learner(learner).claims.claim, "chat-1"))


async def test_a_lost_locks_connection_is_a_typed_error_then_replaced(pg_url):
    learner = new_learner()
    async with open_coordination_factory(pg_url) as one:
        claims = one.for_learner(learner).claims
        assert await claims.claim("chat-1")
        # every coordination connection of every test process is cut, as a restart does
        assert await _terminate(pg_url, "learning-harness coordination") >= 1
        with pytest.raises(StorageError):
            await claims.claim("chat-2")
        assert await claims.claim("chat-2")  # a new connection...
        async with open_coordination_factory(pg_url) as two:
            # ...which took chat-1 again for the claim this process still holds
            assert not await two.for_learner(learner).claims.claim("chat-1")


async def test_a_process_lock_waits_for_the_other_process(pg_url):
    learner = new_learner()
    async with (
        open_coordination_factory(pg_url) as one,
        open_coordination_factory(pg_url) as two,
    ):
        first, second = one.for_learner(learner).locks, two.for_learner(learner).locks
        async with first.hold("graph-merge"):
            with anyio.move_on_after(0.5) as waiting:
                async with second.hold("graph-merge"):
                    raise AssertionError("both processes held the lock")
            assert waiting.cancelled_caught
            async with second.hold("another key"):
                pass
        with anyio.fail_after(5):
            async with second.hold("graph-merge"):
                pass


async def test_frames_reach_the_other_process_only_and_large_ones_as_re_read(pg_url):
    learner = new_learner()
    got: dict[str, list[tuple[str, str | None]]] = {"one": [], "two": []}
    four = anyio.Event()
    async with (
        open_coordination_factory(pg_url) as one,
        open_coordination_factory(pg_url) as two,
        anyio.create_task_group() as tg,
    ):

        def sink(name: str):
            async def deliver(chat_id: str, frame: str | None) -> None:
                got.setdefault(name, []).append((chat_id, frame))
                if len(got["two"]) == 4:
                    four.set()

            return deliver

        tg.start_soon(one.for_learner(learner).fanout.serve, sink("one"))
        tg.start_soon(two.for_learner(learner).fanout.serve, sink("two"))
        tg.start_soon(two.for_learner(new_learner()).fanout.serve, sink("other learner"))
        with anyio.fail_after(5):
            await one.notices.listening.wait()  # type: ignore[attr-defined]
            await two.notices.listening.wait()  # type: ignore[attr-defined]
        fanout = one.for_learner(learner).fanout
        assert fanout.remote
        fanout.publish("chat-1", '{"type":"turn_started","turn_id":1}')
        fanout.publish("chat-1", '{"type":"turn_started","turn_id":1}')  # sent twice: twice
        fanout.publish("chat-1", None)
        fanout.publish("chat-2", '{"type":"job","x":"' + "y" * 9000 + '"}')
        with anyio.fail_after(5):
            await four.wait()
        tg.cancel_scope.cancel()
    assert got["two"] == [
        ("chat-1", '{"type":"turn_started","turn_id":1}'),
        ("chat-1", '{"type":"turn_started","turn_id":1}'),
        ("chat-1", None),
        ("chat-2", None),  # over NOTIFY's 8 kB: "re-read the chat"
    ]
    assert got["one"] == []
    assert "other learner" not in got


async def test_the_listener_comes_back_after_its_connection_is_cut(pg_url):
    learner = new_learner()
    got: list[tuple[str, str | None]] = []
    arrived = anyio.Event()
    async with (
        open_coordination_factory(pg_url) as one,
        open_coordination_factory(pg_url) as two,
        anyio.create_task_group() as tg,
    ):

        async def deliver(chat_id: str, frame: str | None) -> None:
            got.append((chat_id, frame))
            arrived.set()

        tg.start_soon(two.for_learner(learner).fanout.serve, deliver)
        notices = two.notices  # type: ignore[attr-defined]
        with anyio.fail_after(5):
            await notices.listening.wait()
        notices.listening = anyio.Event()
        assert await _terminate(pg_url, "learning-harness coordination") >= 1
        with anyio.fail_after(10):
            await notices.listening.wait()  # listening again
        one.for_learner(learner).fanout.publish("chat-1", None)
        with anyio.fail_after(5):
            await arrived.wait()
        tg.cancel_scope.cancel()
    assert got == [("chat-1", None)]


async def test_only_the_first_process_to_join_a_learner_is_alone(pg_url):
    learner = new_learner()
    async with open_coordination_factory(pg_url) as one:
        assert await one.for_learner(learner).locks.join()
        async with open_coordination_factory(pg_url) as two:
            assert not await two.for_learner(learner).locks.join()  # one is running
            assert await two.for_learner(new_learner()).locks.join()  # another learner
    async with open_coordination_factory(pg_url) as three:
        for _ in range(500):  # once both have let go (their server processes exit)
            if await three.for_learner(learner).locks.join():
                break
            await anyio.sleep(0.01)
        else:
            raise AssertionError("a process that ended still counted as running")
