"""Jobs a dead worker left, found by the survivors: the runner holds each job's lock from
before the job is saved pending until its end is saved, and a sweep (or a start-up beside
other workers) fails as interrupted only the unfinished jobs no live process holds (a
sweep: seen so at two sweeps in a row). The processes here share one lock table
(`LockTable`), as workers share the database's."""

from __future__ import annotations

import msgspec
import pytest
from anyio import wait_all_tasks_blocked

from backend.agent.jobs.recovery import INTERRUPTED
from backend.core.errors import NotFound
from shared_contracts.jobs import Job
from shared_contracts.tools import ResearchArgs
from tests.agents.test_jobs_runner import (
    T0,
    ClaimsHeldElsewhere,
    StubAgent,
    chat,
    harness,
    part,
)
from tests.fakes import MemoryChatStore, MemoryJobStore


class LockTable:
    """Job locks as the database holds them for every process: job id -> holder."""

    def __init__(self) -> None:
        self.holders: dict[str, str] = {}

    def process(self, name: str) -> ProcessJobLocks:
        return ProcessJobLocks(self, name)

    def die(self, name: str) -> None:
        """A process's connection closes: the server releases its locks."""
        self.holders = {job: who for job, who in self.holders.items() if who != name}


class ProcessJobLocks:
    """One process's `JobLocks` over the shared table."""

    def __init__(self, table: LockTable, name: str) -> None:
        self.table, self.name = table, name
        self.renewed = 0

    async def hold(self, job_id: str) -> None:
        self.table.holders.setdefault(job_id, self.name)

    async def release(self, job_id: str) -> None:
        if self.table.holders.get(job_id) == self.name:
            del self.table.holders[job_id]

    async def adopt(self, job_id: str) -> bool:
        if job_id in self.table.holders:
            return False
        self.table.holders[job_id] = self.name
        return True

    async def renew(self) -> None:
        self.renewed += 1


class LockedAtSave(MemoryJobStore):
    """Records, at each save, the job's status and who held its lock then."""

    def __init__(self, table: LockTable) -> None:
        super().__init__()
        self.table = table
        self.seen: list[tuple[str, str | None]] = []

    async def save(self, job: Job) -> None:
        self.seen.append((job.status, self.table.holders.get(job.id)))
        await super().save(job)


def running(job_id: str, call_id: str, chat_id: str = "chat-1") -> Job:
    return Job(
        id=job_id, chat_id=chat_id, tool_call_id=call_id, kind="research",
        status="running", created_at=T0, started_at=T0,
    )  # fmt: skip


class Claims:
    """Turn claims nobody else holds (a surviving worker's, with no turn elsewhere)."""

    async def claim(self, chat_id: str) -> bool:
        return True

    async def release(self, chat_id: str) -> None:
        return None


async def _two_running_jobs(table: LockTable) -> tuple[MemoryChatStore, MemoryJobStore]:
    """Chat-1 with two running jobs: job-1 held by worker `a`, job-2 by worker `dead`."""
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    await jobs.save(running("job-1", "call_1"))
    await jobs.save(running("job-2", "call_2"))
    calls = (("call_1", "research"), ("call_2", "research"))
    await chats.create(chat("chat-1", *calls, job_ids={"call_1": "job-1", "call_2": "job-2"}))
    await table.process("a").hold("job-1")
    await table.process("dead").hold("job-2")
    return chats, jobs


async def test_a_job_is_locked_from_before_its_pending_save_until_after_its_end_is_saved():
    table = LockTable()
    chats, jobs = MemoryChatStore(), LockedAtSave(table)
    await chats.create(chat("chat-1", ("call_r", "research")))
    agent = StubAgent().open()
    locks = table.process("a")
    async with harness(chats, jobs, {"research": agent}, locks=locks) as (runner, _):
        job = await runner.submit("chat-1", "call_r", "research", ResearchArgs(question="q"))
        await runner.wait_idle()
    assert jobs.seen == [("pending", "a"), ("running", "a"), ("done", "a")]
    assert (await jobs.get(job.id)).status == "done"
    assert table.holders == {}  # released once its end was saved


async def test_a_submit_that_fails_leaves_no_lock_behind():
    table = LockTable()
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    locks = table.process("a")
    async with harness(chats, jobs, {"research": StubAgent().open()}, locks=locks) as (runner, _):
        with pytest.raises(NotFound):
            await runner.submit("chat-9", "call_r", "research", ResearchArgs(question="q"))
    assert table.holders == {} and jobs.jobs == {}


async def test_a_sweep_fails_only_the_jobs_no_live_worker_holds():
    table = LockTable()
    chats, jobs = await _two_running_jobs(table)
    locks = table.process("b")
    async with harness(chats, jobs, {}, locks=locks) as (runner, updates):
        assert await runner.sweep(Claims()) == []  # every runner lives
        table.die("dead")
        assert await runner.sweep(Claims()) == []  # seen unheld once
        assert table.holders == {"job-1": "a"}  # (taken for a moment only, to tell)
        failed = await runner.sweep(Claims())  # ...and twice
        assert await runner.sweep(Claims()) == []  # once
    assert locks.renewed == 4  # its own locks first, each time
    assert [(j.id, j.status, j.error) for j in failed] == [("job-2", "failed", INTERRUPTED)]
    assert (await jobs.get("job-1")).status == "running"  # worker a runs it
    assert (await jobs.get("job-2")).error == INTERRUPTED
    record = await chats.get("chat-1")
    assert part(record, "call_1").state == "input-available"
    assert (part(record, "call_2").state, part(record, "call_2").error) == (
        "output-error",
        INTERRUPTED,
    )
    assert table.holders == {"job-1": "a"}  # the sweep let go of what it adopted
    assert updates == []


async def test_a_job_that_ended_while_a_sweep_looked_is_left_as_it_ended():
    table = LockTable()
    chats, jobs = await _two_running_jobs(table)
    table.die("dead")

    class EndsWhenListedAgain(MemoryJobStore):
        listed = 0

        async def unfinished(self) -> list[Job]:
            found = await super().unfinished()
            self.listed += 1
            if self.listed == 2:
                done = msgspec.structs.replace(running("job-2", "call_2"), status="done")
                await self.save(done)  # its runner saved its end, then released its lock
            return found

    ending = EndsWhenListedAgain()
    ending.jobs = jobs.jobs
    async with harness(chats, ending, {}, locks=table.process("b")) as (runner, _):
        assert await runner.sweep(Claims()) == []
        assert await runner.sweep(Claims()) == []
    assert (await ending.get("job-2")).status == "done"


async def test_a_sweep_never_touches_the_jobs_its_own_runner_runs():
    table = LockTable()
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    await chats.create(chat("chat-1", ("call_r", "research")))
    agent = StubAgent()  # its gate stays closed: the job runs until the end
    locks = table.process("a")
    async with harness(chats, jobs, {"research": agent}, locks=locks) as (runner, _):
        job = await runner.submit("chat-1", "call_r", "research", ResearchArgs(question="q"))
        await wait_all_tasks_blocked()
        assert (await jobs.get(job.id)).status == "running"
        assert await runner.sweep(Claims()) == []
        assert await runner.recover(others=Claims()) == []
        assert (await jobs.get(job.id)).status == "running"
        agent.gate.set()
        await runner.wait_idle()
    assert (await jobs.get(job.id)).status == "done"


async def test_a_part_whose_chat_a_turn_holds_elsewhere_is_settled_at_a_later_sweep():
    table = LockTable()
    chats, jobs = await _two_running_jobs(table)
    table.die("dead")
    others = ClaimsHeldElsewhere(busy={"chat-1"})
    async with harness(chats, jobs, {}, locks=table.process("b")) as (runner, _):
        assert await runner.sweep(others) == []
        assert [j.id for j in await runner.sweep(others)] == ["job-2"]
        assert part(await chats.get("chat-1"), "call_2").state == "input-available"
        others.busy.clear()  # that turn has ended
        assert await runner.sweep(others) == []
    assert part(await chats.get("chat-1"), "call_2").error == INTERRUPTED


async def test_a_job_whose_worker_takes_its_lock_again_before_the_next_sweep_is_left():
    table = LockTable()
    chats, jobs = await _two_running_jobs(table)
    table.die("dead")  # its connection was cut (a database restart), the worker lives
    async with harness(chats, jobs, {}, locks=table.process("b")) as (runner, _):
        assert await runner.sweep(Claims()) == []
        await table.process("dead").hold("job-2")  # renewed: its locks taken again
        assert await runner.sweep(Claims()) == []
        assert await runner.sweep(Claims()) == []
    assert (await jobs.get("job-2")).status == "running"


async def test_a_start_beside_other_workers_fails_the_jobs_no_live_worker_holds():
    table = LockTable()
    chats, jobs = await _two_running_jobs(table)
    table.die("dead")
    async with harness(chats, jobs, {}, locks=table.process("b")) as (runner, _):
        recovered = await runner.recover(others=Claims())
    assert [j.id for j in recovered] == ["job-2"]
    assert (await jobs.get("job-1")).status == "running"
    record = await chats.get("chat-1")
    assert part(record, "call_1").state == "input-available"
    assert part(record, "call_2").error == INTERRUPTED
    assert table.holders == {"job-1": "a"}
