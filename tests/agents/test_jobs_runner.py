"""The job runner on anyio task groups, with in-memory stores and stub sub-agents."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import anyio
import anyio.lowlevel
import msgspec
import pytest
from anyio import wait_all_tasks_blocked

from backend.agent.jobs import JobRunner, SubAgentContext, create_job_runner
from backend.agent.jobs.recovery import INTERRUPTED, NEVER_RECORDED
from backend.core.errors import (
    BadToolArguments,
    Busy,
    ModelError,
    NotFound,
    StorageError,
    ToolError,
)
from shared_contracts.chat import ChatRecord, Message, TextPart, ToolPart
from shared_contracts.jobs import Job, ResearchNote, Visual
from shared_contracts.tools import DemoArgs, JobOutput, ResearchArgs, VisualArgs
from tests.fakes import FixedClock, MemoryChatStore, MemoryJobStore, SequentialIds

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NOTE = ResearchNote(title="Note", body="Body", caveat="offline")
PICTURE = Visual(title="Pic", svg="<svg/>")


def chat(chat_id: str, *calls: tuple[str, str], job_ids: dict[str, str] | None = None):
    parts = [
        ToolPart(
            tool_call_id=call_id,
            tool_name=name,
            state="input-available",
            job_id=(job_ids or {}).get(call_id),
        )
        for call_id, name in calls
    ]
    message = Message(id="msg-1", role="assistant", turn=1, created_at=T0, parts=parts)
    return ChatRecord(id=chat_id, title="t", created_at=T0, updated_at=T0, messages=[message])


def part(record: ChatRecord, call_id: str) -> ToolPart:
    found = [p for m in record.messages for p in m.parts if isinstance(p, ToolPart)]
    return next(p for p in found if p.tool_call_id == call_id)


class StubAgent:
    """Returns `result` once `gate` opens; can raise or hang; records contexts and overlap."""

    def __init__(self, result=NOTE, *, error: Exception | None = None, hang: bool = False):
        self.result, self.error, self.hang = result, error, hang
        self.gate = anyio.Event()
        self.contexts: list[SubAgentContext] = []
        self.running = 0
        self.peak = 0

    def open(self) -> StubAgent:
        self.gate.set()
        return self

    async def run(self, args, context):
        self.contexts.append(context)
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await self.gate.wait()
            if self.hang:
                await anyio.sleep_forever()
            if self.error:
                raise self.error
            return self.result
        finally:
            self.running -= 1


@asynccontextmanager
async def harness(
    chats, jobs, agents, *, on_update: Callable | None = None, **limits
) -> AsyncIterator[tuple[JobRunner, list[Job]]]:
    updates: list[Job] = []

    async def record(job: Job) -> None:
        updates.append(job)

    async with anyio.create_task_group() as tg:
        runner = create_job_runner(
            chats,
            jobs,
            tg,
            agents=agents,
            clock=FixedClock(),
            ids=SequentialIds(),
            on_update=on_update or record,
            **limits,
        )
        yield runner, updates
        await runner.shutdown()


async def test_a_job_runs_in_the_background_then_settles_its_part(caplog) -> None:
    caplog.set_level(logging.INFO)
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    await chats.create(chat("chat-1", ("call_r", "research")))
    agent = StubAgent()
    async with harness(chats, jobs, {"research": agent}) as (runner, updates):
        ctx = SubAgentContext(goal="Waves", plan_titles=("Sine",))
        job = await runner.submit(
            "chat-1", "call_r", "research", ResearchArgs(question="why?"), context=ctx
        )
        assert job.status == "pending" and job.brief == "why?"
        tagged = part(await chats.get("chat-1"), "call_r")
        assert tagged.state == "input-available" and tagged.job_id == job.id
        await wait_all_tasks_blocked()
        assert (await jobs.get(job.id)).status == "running"
        agent.open()
        await runner.wait_idle()
    assert [j.status for j in jobs.history] == ["pending", "running", "done"]
    done = await jobs.get(job.id)
    assert done.result == NOTE and done.started_at and done.finished_at
    settled = part(await chats.get("chat-1"), "call_r")
    assert settled.state == "output-available"
    assert settled.output == JobOutput(job_id=job.id, status="done", result=NOTE)
    assert updates == [done]
    (context,) = agent.contexts
    assert (context.chat_id, context.job_id, context.goal) == ("chat-1", job.id, "Waves")
    assert context.key == f"job:{job.id}"
    assert f"[job {job.id}] done" in caplog.text


class AuditingAgent(StubAgent):
    """Records what its checks dropped, as the researcher does."""

    async def run(self, args, context):
        context.audit.append("citation dropped (not found): 'x'")
        return await super().run(args, context)


async def test_what_a_job_dropped_goes_to_the_job_record_not_its_result() -> None:
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    await chats.create(chat("chat-1", ("call_r", "research"), ("call_s", "research")))
    agent = AuditingAgent().open()
    shared = SubAgentContext(goal="Waves")
    async with harness(chats, jobs, {"research": agent}) as (runner, _):
        first = await runner.submit(
            "chat-1", "call_r", "research", ResearchArgs(question="q"), context=shared
        )
        second = await runner.submit(
            "chat-1", "call_s", "research", ResearchArgs(question="q"), context=shared
        )
        await runner.wait_idle()
    for job in (first, second):  # each job its own list: none sees another's drops
        assert (await jobs.get(job.id)).audit == ["citation dropped (not found): 'x'"]
    settled = part(await chats.get("chat-1"), "call_r")
    assert settled.output == JobOutput(job_id=first.id, status="done", result=NOTE)
    assert shared.audit == []


async def test_two_jobs_in_one_turn_each_settle_their_own_part() -> None:
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    await chats.create(chat("chat-1", ("call_r", "research"), ("call_v", "visual")))
    agents = {"research": StubAgent().open(), "visual": StubAgent(PICTURE).open()}
    async with harness(chats, jobs, agents) as (runner, updates):
        first = await runner.submit("chat-1", "call_r", "research", ResearchArgs(question="q"))
        second = await runner.submit("chat-1", "call_v", "visual", VisualArgs(brief="b"))
        await runner.wait_idle()
    assert first.id != second.id
    record = await chats.get("chat-1")
    assert part(record, "call_r").output == JobOutput(job_id=first.id, status="done", result=NOTE)
    assert part(record, "call_v").output == JobOutput(
        job_id=second.id, status="done", result=PICTURE
    )
    assert sorted(j.id for j in updates) == sorted([first.id, second.id])


class SerialisedSlowStore(MemoryChatStore):
    """Like the real store: `update` holds a per-chat lock across a slow read-modify-write.
    While `pause` is set, an update parks inside the lock (a turn's write mid-flight)."""

    def __init__(self, *, locked: bool = True) -> None:
        super().__init__()
        self.locked = locked
        self.locks: dict[str, anyio.Lock] = {}
        self.pause: anyio.Event | None = None
        self.inside = anyio.Event()

    async def update(self, chat_id, mutate):
        lock = self.locks.setdefault(chat_id, anyio.Lock()) if self.locked else None
        if lock:
            await lock.acquire()
        try:
            record = await self.get(chat_id)
            if self.pause is not None:
                pause, self.pause = self.pause, None
                self.inside.set()
                await pause.wait()
            await anyio.lowlevel.checkpoint()
            record = mutate(record)
            self.records[chat_id] = record
            return record
        finally:
            if lock:
                lock.release()


def add_turn_message(record: ChatRecord) -> ChatRecord:
    text = [TextPart(text="go on")]
    reply = Message(id="msg-2", role="assistant", turn=2, created_at=T0, parts=text)
    return msgspec.structs.replace(record, messages=[*record.messages, reply], turns=2)


@pytest.mark.parametrize("locked", [True, False])
async def test_a_job_finishing_during_a_turn_write(locked: bool) -> None:
    chats, jobs = SerialisedSlowStore(locked=locked), MemoryJobStore()
    await chats.create(chat("chat-1", ("call_r", "research")))
    agent = StubAgent()
    async with (
        harness(chats, jobs, {"research": agent}) as (runner, _),
        anyio.create_task_group() as turn,
    ):
        await runner.submit("chat-1", "call_r", "research", ResearchArgs(question="q"))
        resume = chats.pause = anyio.Event()
        turn.start_soon(chats.update, "chat-1", add_turn_message)
        await chats.inside.wait()  # the turn's write has read the record and is mid-flight
        agent.open()
        await wait_all_tasks_blocked()  # the job has finished and is settling its part
        resume.set()
        await runner.wait_idle()
    record = await chats.get("chat-1")
    turn_kept = [m.id for m in record.messages] == ["msg-1", "msg-2"]
    job_kept = part(record, "call_r").state == "output-available"
    # Through the store's per-chat lock both writes survive; without it (the control) the
    # interleaving really happens and one write is lost — so this scenario can fail.
    assert (turn_kept and job_kept) is locked


async def test_a_model_failure_shows_its_public_message_on_the_job_not_the_detail() -> None:
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    await chats.create(chat("chat-1", ("call_d", "demo")))
    public = "The tutor's model (m) could not be reached. Send your message again."
    agent = StubAgent(error=ModelError("m: APIConnectionError: [Errno 111]", public=public))
    async with harness(chats, jobs, {"demo": agent.open()}) as (runner, _updates):
        job = await runner.submit("chat-1", "call_d", "demo", DemoArgs(brief="b"))
        await runner.wait_idle()
    assert (await jobs.get(job.id)).error == public
    assert part(await chats.get("chat-1"), "call_d").error == public


async def test_a_timed_out_job_fails_and_its_part_shows_the_error() -> None:
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    await chats.create(chat("chat-1", ("call_d", "demo")))
    agent = StubAgent(hang=True).open()
    async with harness(chats, jobs, {"demo": agent}, timeout_s=0.05) as (runner, updates):
        job = await runner.submit("chat-1", "call_d", "demo", DemoArgs(brief="b"))
        await runner.wait_idle()
    failed = await jobs.get(job.id)
    assert failed.status == "failed" and failed.error == "timed out after 0.05 s"
    settled = part(await chats.get("chat-1"), "call_d")
    assert settled.state == "output-error" and settled.error == "timed out after 0.05 s"
    assert updates == [failed]


async def test_errors_are_contained_and_siblings_finish() -> None:
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    await chats.create(chat("chat-1", ("call_r", "research"), ("call_v", "visual")))
    agents = {
        "research": StubAgent(error=ValueError("boom")).open(),
        "visual": StubAgent(PICTURE).open(),
    }

    async def flaky_update(job: Job) -> None:
        raise RuntimeError("client gone")

    async with harness(chats, jobs, agents, on_update=flaky_update) as (runner, _):
        bad = await runner.submit("chat-1", "call_r", "research", ResearchArgs(question="q"))
        good = await runner.submit("chat-1", "call_v", "visual", VisualArgs(brief="b"))
        await runner.wait_idle()
    assert (await jobs.get(bad.id)).error == "ValueError: boom"
    assert (await jobs.get(good.id)).status == "done"
    assert part(await chats.get("chat-1"), "call_r").error == "ValueError: boom"


async def test_limits_queue_jobs_and_never_reject() -> None:
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    calls_a = [(f"a{i}", "research") for i in range(4)]
    calls_b = [(f"b{i}", "research") for i in range(2)]
    await chats.create(chat("chat-a", *calls_a))
    await chats.create(chat("chat-b", *calls_b))
    agent = StubAgent()
    async with harness(chats, jobs, {"research": agent}, max_per_chat=2, max_global=3) as (
        runner,
        _,
    ):
        for chat_id, calls in (("chat-a", calls_a), ("chat-b", calls_b)):
            for call_id, _name in calls:
                await runner.submit(chat_id, call_id, "research", ResearchArgs(question="q"))
        await wait_all_tasks_blocked()
        statuses = [j.status for j in await jobs.list_all()]
        assert statuses.count("running") == 3 and statuses.count("pending") == 3
        running = [j.chat_id for j in await jobs.list_all() if j.status == "running"]
        assert running.count("chat-a") == 2
        agent.open()
        await runner.wait_idle()
    assert agent.peak == 3
    assert all(j.status == "done" for j in await jobs.list_all()) and len(jobs.jobs) == 6
    assert runner.active_ids() == []


async def test_shutdown_cancels_running_and_queued_jobs() -> None:
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    await chats.create(chat("chat-1", ("call_1", "research"), ("call_2", "research")))
    agent = StubAgent(hang=True).open()
    async with harness(chats, jobs, {"research": agent}, max_per_chat=1) as (runner, updates):
        one = await runner.submit("chat-1", "call_1", "research", ResearchArgs(question="q"))
        two = await runner.submit("chat-1", "call_2", "research", ResearchArgs(question="q"))
        await wait_all_tasks_blocked()
        assert (await jobs.get(two.id)).status == "pending"  # queued behind the per-chat limit
        await runner.shutdown()
        with pytest.raises(Busy):
            await runner.submit("chat-1", "call_1", "research", ResearchArgs(question="q"))
    for job_id, call_id in ((one.id, "call_1"), (two.id, "call_2")):
        assert (await jobs.get(job_id)).status == "cancelled"
        settled = part(await chats.get("chat-1"), call_id)
        assert (settled.state, settled.error) == ("output-error", "cancelled")
    assert updates == []


async def test_cancelling_the_whole_task_group_still_records_the_job() -> None:
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    await chats.create(chat("chat-1", ("call_1", "research")))
    agent = StubAgent(hang=True).open()
    async with anyio.create_task_group() as tg:
        runner = create_job_runner(
            chats, jobs, tg, agents={"research": agent}, clock=FixedClock(), ids=SequentialIds(),
            on_update=lambda job: anyio.lowlevel.checkpoint(),
        )  # fmt: skip
        job = await runner.submit("chat-1", "call_1", "research", ResearchArgs(question="q"))
        await wait_all_tasks_blocked()
        tg.cancel_scope.cancel()  # what the lifespan does on exit
    assert (await jobs.get(job.id)).status == "cancelled"
    assert part(await chats.get("chat-1"), "call_1").state == "output-error"


async def test_recovery_after_a_crash_leaves_no_part_pending() -> None:
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    crashed = Job(
        id="job-0009", chat_id="chat-1", tool_call_id="call_r", kind="research",
        status="running", created_at=T0, started_at=T0,
    )  # fmt: skip
    finished = Job(
        id="job-0010", chat_id="chat-1", tool_call_id="call_v", kind="visual",
        status="done", created_at=T0, result=PICTURE,
    )  # fmt: skip
    await jobs.save(crashed)
    await jobs.save(finished)
    record = chat(
        "chat-1",
        ("call_r", "research"),
        ("call_v", "visual"),
        ("call_d", "demo"),
        ("call_q", "quiz"),
        job_ids={"call_r": "job-0009"},
    )
    await chats.create(record)
    await chats.create(chat("chat-2"))
    async with harness(chats, jobs, {}) as (runner, updates):
        recovered = await runner.recover()
    assert [j.id for j in recovered] == ["job-0009"]
    assert (await jobs.get("job-0009")).status == "failed"
    assert (await jobs.get("job-0009")).error == INTERRUPTED
    after = await chats.get("chat-1")
    r, v, d = part(after, "call_r"), part(after, "call_v"), part(after, "call_d")
    assert (r.state, r.error) == ("output-error", INTERRUPTED)
    assert v.output == JobOutput(job_id="job-0010", status="done", result=PICTURE)
    assert (d.state, d.error) == ("output-error", NEVER_RECORDED)
    assert part(after, "call_q").state == "input-available"  # questions wait for the learner
    assert updates == []


class ClaimsHeldElsewhere:
    """Other workers' turn claims: `busy` chats are theirs now; records what was asked."""

    def __init__(self, busy: set[str]) -> None:
        self.busy = busy
        self.calls: list[tuple[str, str]] = []

    async def claim(self, chat_id: str) -> bool:
        self.calls.append(("claim", chat_id))
        return chat_id not in self.busy

    async def release(self, chat_id: str) -> None:
        self.calls.append(("release", chat_id))


async def test_recovery_beside_other_workers_fails_no_job_and_skips_their_turns() -> None:
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    running = Job(
        id="job-0009", chat_id="chat-1", tool_call_id="call_r", kind="research",
        status="running", created_at=T0, started_at=T0,
    )  # fmt: skip
    await jobs.save(running)
    both = (("call_r", "research"), ("call_d", "demo"))
    await chats.create(chat("chat-1", *both, job_ids={"call_r": "job-0009"}))
    await chats.create(chat("chat-2", ("call_d", "demo")))
    others = ClaimsHeldElsewhere(busy={"chat-2"})
    async with harness(chats, jobs, {}) as (runner, updates):
        recovered = await runner.recover(others=others)
    assert recovered == []
    assert (await jobs.get("job-0009")).status == "running"  # maybe running elsewhere
    first = await chats.get("chat-1")
    assert part(first, "call_r").state == "input-available"  # its job has not ended
    assert (part(first, "call_d").state, part(first, "call_d").error) == (
        "output-error",
        NEVER_RECORDED,  # its turn died while submitting it
    )
    assert part(await chats.get("chat-2"), "call_d").state == "input-available"  # a turn's
    assert sorted(others.calls) == [("claim", "chat-1"), ("claim", "chat-2"), ("release", "chat-1")]
    assert updates == []


async def test_submit_refuses_bad_input_and_records_nothing() -> None:
    chats, jobs = MemoryChatStore(), MemoryJobStore()
    await chats.create(chat("chat-1", ("call_r", "research")))
    async with harness(chats, jobs, {"research": StubAgent().open()}) as (runner, _):
        with pytest.raises(NotFound):
            await runner.submit("chat-9", "call_r", "research", ResearchArgs(question="q"))
        with pytest.raises(BadToolArguments):
            await runner.submit("chat-1", "call_r", "research", DemoArgs(brief="b"))
        with pytest.raises(ToolError, match="no sub-agent"):
            await runner.submit("chat-1", "call_r", "demo", DemoArgs(brief="b"))
    assert jobs.jobs == {}


class Restarting(StorageError):
    """What the PostgreSQL adapter raises while the database restarts."""

    retryable = True


class FlakyChats(MemoryChatStore):
    """Refuses the next `failures` updates with `error`, then works."""

    def __init__(self, failures: int, error: type[StorageError]) -> None:
        super().__init__()
        self.failures, self.error, self.refused = failures, error, 0

    async def update(self, chat_id, mutate):
        if self.failures:
            self.failures -= 1
            self.refused += 1
            raise self.error("database unavailable: the server is restarting")
        return await super().update(chat_id, mutate)


@pytest.mark.parametrize(
    ("error", "settles", "refused"), [(Restarting, True, 2), (StorageError, False, 1)]
)
async def test_a_job_settles_its_part_once_the_store_is_back(error, settles, refused) -> None:
    """A database restarting as a job ends: the part is settled once it is back (it used to
    wait as 'input-available' for a done job until the next start); a disk that refused
    the write is not asked again."""
    chats, jobs = FlakyChats(0, error), MemoryJobStore()
    await chats.create(chat("chat-1", ("call_r", "research")))
    agent = StubAgent()
    async with harness(chats, jobs, {"research": agent}) as (runner, _):
        job = await runner.submit("chat-1", "call_r", "research", ResearchArgs(question="q"))
        await wait_all_tasks_blocked()
        chats.failures = 2
        agent.open()
        await runner.wait_idle()
    assert (await jobs.get(job.id)).status == "done"
    assert chats.refused == refused
    state = part(await chats.get("chat-1"), "call_r").state
    assert state == ("output-available" if settles else "input-available")


class FlakyJobs(MemoryJobStore):
    """Refuses the next `failures` saves with a restarting database's error, then works."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures, self.refused = failures, 0

    async def save(self, job):
        if self.failures:
            self.failures -= 1
            self.refused += 1
            raise Restarting("database unavailable: the server is restarting")
        return await super().save(job)


async def test_a_job_submitted_as_the_database_restarts_is_recorded_once_it_is_back() -> None:
    chats, jobs = MemoryChatStore(), FlakyJobs(2)
    await chats.create(chat("chat-1", ("call_r", "research")))
    async with harness(chats, jobs, {"research": StubAgent().open()}) as (runner, _):
        job = await runner.submit("chat-1", "call_r", "research", ResearchArgs(question="q"))
        await runner.wait_idle()
    assert jobs.refused == 2
    assert (await jobs.get(job.id)).status == "done"
    assert part(await chats.get("chat-1"), "call_r").state == "output-available"


async def test_a_job_that_cannot_be_recorded_leaves_no_part_waiting(monkeypatch) -> None:
    """The part is attached before the job is saved: if the save never succeeds, the part
    is settled as failed rather than left pending with no job (verify's complaint)."""
    monkeypatch.setattr("backend.agent.jobs.runner.SETTLE_PAUSES", (0.01, 0.01))
    chats, jobs = MemoryChatStore(), FlakyJobs(99)
    await chats.create(chat("chat-1", ("call_r", "research")))
    async with harness(chats, jobs, {"research": StubAgent().open()}) as (runner, _):
        with pytest.raises(StorageError, match="could not be recorded"):
            await runner.submit("chat-1", "call_r", "research", ResearchArgs(question="q"))
    settled_part = part(await chats.get("chat-1"), "call_r")
    assert settled_part.state == "output-error"
    assert "could not be recorded" in (settled_part.error or "")
    assert jobs.jobs == {}
