"""The job lock port (`JobLocks`) on both backends, as the app gets it from
`open_coordination_factory`: a job its runner holds is never adopted, a released or
never-held one is; on PostgreSQL across two "processes" (each its own connections), a
job held by one is not the other's to adopt until its holder releases it or dies."""

from __future__ import annotations

from functools import partial

import pytest

from backend.server.stores import open_coordination_factory
from tests.unit.store.factories import BACKENDS
from tests.unit.store.test_pg_coordination import _terminate, taken_within
from tests.unit.store.test_port_contracts import new_learner


@pytest.fixture(params=BACKENDS)
def database_url(request) -> str | None:
    return None if request.param == "files" else request.getfixturevalue("pg_url")


async def test_a_held_job_is_not_adopted_a_released_one_is(database_url):
    async with open_coordination_factory(database_url) as factory:
        locks = factory.for_learner(new_learner()).jobs
        await locks.hold("job-1")
        assert not await locks.adopt("job-1")  # its runner lives (this process)
        await locks.release("job-1")
        assert await locks.adopt("job-1")  # its runner let go: an orphan, ours now
        assert not await locks.adopt("job-1")  # adopted once
        await locks.release("job-1")
        assert await locks.adopt("job-9")  # never held by anyone
        await locks.release("job-9")
        await locks.hold("job-2")
        await locks.renew()  # nothing was lost: nothing changes
        assert not await locks.adopt("job-2")


async def test_another_process_adopts_a_job_only_once_its_holder_lets_go(pg_url):
    learner = new_learner()
    async with (
        open_coordination_factory(pg_url) as one,
        open_coordination_factory(pg_url) as two,
    ):
        runner, sweeper = one.for_learner(learner).jobs, two.for_learner(learner).jobs
        await runner.hold("job-1")
        assert not await sweeper.adopt("job-1")
        assert await two.for_learner(new_learner()).jobs.adopt("job-1")  # another learner's
        await runner.release("job-1")
        assert await sweeper.adopt("job-1")
        assert not await runner.adopt("job-1")  # the sweeper holds it while it ends the job
        await sweeper.release("job-1")


async def test_a_dead_holders_jobs_are_adopted_by_the_survivor(pg_url):
    learner = new_learner()
    async with open_coordination_factory(pg_url) as two:
        async with open_coordination_factory(pg_url) as one:
            await one.for_learner(learner).jobs.hold("job-1")
            await one.for_learner(learner).jobs.hold("job-2")
            assert not await two.for_learner(learner).jobs.adopt("job-1")
        # the holder's connection is gone (as a SIGKILLed worker's is)
        survivor = two.for_learner(learner).jobs
        assert await taken_within(partial(survivor.adopt, "job-1"))
        assert await taken_within(partial(survivor.adopt, "job-2"))


async def test_a_holder_that_lost_its_connection_holds_its_jobs_again_once_renewed(pg_url):
    learner = new_learner()
    async with (
        open_coordination_factory(pg_url) as one,
        open_coordination_factory(pg_url) as two,
    ):
        runner, sweeper = one.for_learner(learner).jobs, two.for_learner(learner).jobs
        await runner.hold("job-1")
        # every coordination connection is cut, as a database restart does
        assert await _terminate(pg_url, "learning-harness coordination") >= 2
        await sweeper.renew()
        await runner.renew()  # what its own sweep does first
        assert not await sweeper.adopt("job-1")
        await runner.release("job-1")
        assert await sweeper.adopt("job-1")
