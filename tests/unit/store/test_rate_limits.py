"""The `RateLimits` contract (sign-in and sign-up buckets), in memory for files and in the
database on PostgreSQL, timed by the caller's clock; and the database's table bounded."""

from __future__ import annotations

import secrets
from datetime import timedelta

import anyio
import pytest

from backend.core.rate_limits import MemoryRateLimits
from backend.server.stores import PgStoreFactory, open_store_factory
from tests.unit.store.factories import T0


def key() -> str:
    """A key no other test uses (the PostgreSQL database is shared by the session)."""
    return f"name:user-{secrets.token_hex(6)}"


async def test_a_burst_is_allowed_then_the_next_attempt_waits_one_interval(factory):
    limits, ada, bob = factory.rate_limits, key(), key()
    assert [await limits.take(ada, 3, 10.0, T0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert await limits.take(ada, 3, 10.0, T0) == pytest.approx(10.0)
    assert await limits.take(ada, 3, 10.0, T0) == pytest.approx(10.0)  # refused ones cost none
    assert await limits.take(bob, 3, 10.0, T0) == 0.0  # another key has its own bucket


async def test_the_bucket_refills_by_the_callers_clock(factory):
    limits, ada = factory.rate_limits, key()
    for _ in range(2):
        assert await limits.take(ada, 2, 10.0, T0) == 0.0
    assert await limits.take(ada, 2, 10.0, T0 + timedelta(seconds=4)) == pytest.approx(6.0)
    assert await limits.take(ada, 2, 10.0, T0 + timedelta(seconds=10)) == 0.0
    assert await limits.take(ada, 2, 10.0, T0 + timedelta(seconds=10)) == pytest.approx(10.0)
    later = T0 + timedelta(hours=1)  # refilled to the burst, never beyond it
    assert [await limits.take(ada, 2, 10.0, later) for _ in range(3)] == [0.0, 0.0, 10.0]


async def test_a_clock_set_back_refills_nothing(factory):
    limits, ada = factory.rate_limits, key()
    assert await limits.take(ada, 1, 30.0, T0) == 0.0
    wait = await limits.take(ada, 1, 30.0, T0 - timedelta(minutes=5))
    assert wait == pytest.approx(30.0)


async def test_attempts_at_once_from_two_workers_spend_one_bucket(tmp_path, pg_url):
    ada, answers = key(), []
    async with (
        open_store_factory(tmp_path / "one", pg_url) as one,
        open_store_factory(tmp_path / "two", pg_url) as two,
    ):

        async def attempt(limits) -> None:
            answers.append(await limits.take(ada, 5, 60.0, T0))

        async with anyio.create_task_group() as tg:
            for n in range(12):
                tg.start_soon(attempt, (one, two)[n % 2].rate_limits)
    assert sorted(answers) == [0.0] * 5 + [pytest.approx(60.0)] * 7


async def _rows(factory: PgStoreFactory, keys: list[str]) -> set[str]:
    async def read(conn) -> set[str]:
        cur = await conn.execute("SELECT key FROM rate_limits WHERE key = ANY(%s)", (keys,))
        return {row[0] for row in await cur.fetchall()}

    return await factory.db.run(read, retry=True)


async def test_rows_whose_bucket_is_full_again_are_swept(tmp_path, pg_url):
    async with open_store_factory(tmp_path / "data", pg_url) as factory:
        assert isinstance(factory, PgStoreFactory)
        limits, refilled, still_low, later = factory.rate_limits, key(), key(), key()
        await limits.take(refilled, 2, 1.0, T0)  # full again at T0 + 1 s
        await limits.take(still_low, 2, 3600.0, T0)  # full again at T0 + 1 h
        await limits.take(later, 2, 1.0, T0 + timedelta(minutes=5))  # within the sweep's wait
        assert await _rows(factory, [refilled, still_low, later]) == {refilled, still_low, later}
        await limits.take(later, 2, 1.0, T0 + timedelta(minutes=11))  # sweeps first
        assert await _rows(factory, [refilled, still_low, later]) == {still_low, later}
        assert await limits.take(still_low, 2, 3600.0, T0 + timedelta(minutes=11)) == 0.0


async def test_memory_forgets_full_buckets_once_over_its_key_budget():
    limits = MemoryRateLimits(max_keys=3)
    for n in range(3):
        await limits.take(f"address:{n}", 2, 1.0, T0)
    await limits.take("address:busy", 1, 60.0, T0 + timedelta(seconds=5))
    assert len(limits) == 1  # the three refilled ones went; the busy one stays
    assert await limits.take("address:busy", 1, 60.0, T0 + timedelta(seconds=5)) > 0
