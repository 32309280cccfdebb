"""The job runner: research / demo / visual jobs on the app's anyio task group.

A job tool part of a turn becomes a job by `spawn` (the turn's `JobSpawner`). Lifecycle
of a job (saved to the `JobStore` at every step):
pending (queued for a slot) → running → done | failed | cancelled. When a job ends, its
tool part in the chat record is rewritten through `ChatStore.update` (serialised per chat,
so a turn writing the same record concurrently loses nothing), then `on_update(job)` is
awaited (not for cancelled jobs: those only happen at shutdown). With `JobLocks`, the
runner holds each job's lock from before it is saved pending until its end is saved, so
other processes can tell a job whose runner died (`recovery.JobRecovery`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import cast

import anyio
import msgspec
from anyio.abc import TaskGroup

from backend.agent.jobs.base import JobArgs, SubAgent, SubAgentContext, brief_of
from backend.agent.jobs.parts import attach_job, settle_job
from backend.agent.jobs.recovery import ORPHAN_SWEEP_S, JobRecovery
from backend.agent.tool_specs import decode_tool_args
from backend.core.errors import BadToolArguments, Busy, HarnessError, StorageError, ToolError
from backend.core.ids import require_id
from backend.core.ports import ChatStore, Clock, IdGen, JobLocks, JobStore, TurnClaims
from shared_contracts.chat import ToolPart
from shared_contracts.jobs import Job, JobKind
from shared_contracts.tools import JOB_TOOLS, DemoArgs, ResearchArgs, VisualArgs

log = logging.getLogger(__name__)

OnUpdate = Callable[[Job], Awaitable[None]]
OnSubmitted = Callable[[str, str, str], Awaitable[None]]
"""Told (chat id, job id, tool call id) once a tool part has its job."""
CANCELLED = "cancelled"
NOT_RECORDED = "could not be recorded: the store was unreachable"
SETTLE_PAUSES = (0.1, 0.3, 1.0, 3.0)
"""Seconds between attempts to record a job's end while the store is briefly unreachable
(a database restart takes about a second): a job done but never settled in its chat would
wait there until the next start."""
_ARGS: dict[str, type] = {"research": ResearchArgs, "demo": DemoArgs, "visual": VisualArgs}
_MAX_ERROR = 500


@dataclass(slots=True)
class _Active:
    scope: anyio.CancelScope
    done: anyio.Event


def _describe(exc: BaseException) -> str:
    """The job's error as the learner's card and the teacher read it (a model failure's
    public message, not the provider's raw error)."""
    text = exc.public_message() if isinstance(exc, HarnessError) else f"{type(exc).__name__}: {exc}"
    return text[:_MAX_ERROR]


class JobRunner:
    """Runs sub-agent jobs in the background and settles their tool parts.

    Rules: `submit` returns at once and never rejects for load (the per-chat and global
    limits queue, first come first served); the tool part is only ever rewritten through
    `chats.update`; no error escapes into the task group; cancellation is recorded under a
    shielded scope and then re-raised.
    """

    def __init__(
        self,
        chats: ChatStore,
        jobs: JobStore,
        task_group: TaskGroup,
        *,
        agents: Mapping[str, SubAgent],
        clock: Clock,
        ids: IdGen,
        on_update: OnUpdate,
        max_per_chat: int,
        max_global: int,
        timeout_s: float,
        on_start: OnUpdate | None = None,
        on_submitted: OnSubmitted | None = None,
        locks: JobLocks | None = None,
    ) -> None:
        self._chats, self._jobs, self._tg = chats, jobs, task_group
        self._locks = locks
        """Held for each job from before it is saved pending until its end is saved (other
        processes fail an unfinished job no one holds); None: no other process looks."""
        self._on_submitted = on_submitted
        self._on_start = on_start
        """Awaited in a job's task before it queues for its slot (a replay's hold point: a
        job its recording shows cancelled before it started waits there to be cancelled)."""
        self._agents = dict(agents)
        self._clock, self._ids, self._on_update = clock, ids, on_update
        self._max_per_chat, self._timeout_s = max_per_chat, timeout_s
        self._global = anyio.CapacityLimiter(max_global)
        self._per_chat: dict[str, tuple[anyio.CapacityLimiter, int]] = {}
        self._active: dict[str, _Active] = {}
        self._closed = False
        self._recovery = JobRecovery(chats, jobs, clock, active=self._active, locks=locks)

    async def spawn(self, chat_id: str, part: ToolPart) -> str:
        """A job for a job tool part of the chat (its arguments decoded again, its brief set
        in the chat's plan); the job's id. Raises as `submit`, or `ToolError` for a part
        that is no job."""
        kind = part.tool_name
        args = decode_tool_args(kind, msgspec.json.encode(part.input).decode())
        if kind not in JOB_TOOLS or not isinstance(args, JobArgs):
            raise ToolError(f"{kind} is not a background job")
        plan = (await self._chats.get(chat_id)).plan
        context = SubAgentContext(
            goal=plan.goal if plan else "",
            plan_titles=tuple(n.title for n in plan.nodes) if plan else (),
        )
        job = await self.submit(
            chat_id, part.tool_call_id, cast(JobKind, kind), args, context=context
        )
        if self._on_submitted is not None:
            await self._on_submitted(chat_id, job.id, part.tool_call_id)
        return job.id

    async def submit(
        self,
        chat_id: str,
        tool_call_id: str,
        kind: JobKind,
        args: JobArgs,
        *,
        context: SubAgentContext | None = None,
    ) -> Job:
        """Record a pending job, tag its tool part with the job id, start it; return it.

        Raises `NotFound` (no such chat: nothing is recorded), `BadToolArguments`,
        `ToolError` (no sub-agent for `kind`) or `Busy` (after `shutdown`).
        """
        if self._closed:
            raise Busy("the job runner is shut down")
        require_id(chat_id, "chat id")
        agent = self._agents.get(kind)
        if agent is None:
            raise ToolError(f"no sub-agent for job kind {kind!r}")
        if not isinstance(args, _ARGS[kind]):
            raise BadToolArguments(f"{kind} job got {type(args).__name__}")
        job = Job(
            id=self._ids.new("job"),
            chat_id=chat_id,
            tool_call_id=tool_call_id,
            kind=kind,
            brief=brief_of(args),
            node_id=args.node_id,
            created_at=self._clock.now(),
        )
        if self._locks is not None:
            await self._locks.hold(job.id)  # before anything records it: never an orphan
        started = False
        try:
            await self._chats.update(chat_id, lambda record: attach_job(record, job))
            # Once its part is attached, a job is saved and started whatever cancels the
            # caller (an abort, a shutdown): a cancellation lands after, not between.
            with anyio.CancelScope(shield=True):
                await self._record_pending(job)
            context = replace(
                context or SubAgentContext(), chat_id=chat_id, job_id=job.id, audit=[]
            )
            self._start(job, agent, args, context)
            started = True
        finally:
            if not started:
                with anyio.CancelScope(shield=True):
                    await self._release(job.id)
        log.info("[job %s] submitted: %s for chat %s", job.id, kind, chat_id)
        return job

    async def _record_pending(self, job: Job) -> None:
        """Save the pending job of a part just attached, tried again while the store is
        briefly unreachable (as a job's end is). If it cannot be saved, the part is settled
        as failed, not left waiting for a job no one recorded, and a `StorageError` raised."""
        if await self._persist(job, "save the pending job", lambda: self._jobs.save(job)):
            return
        failed = self._finished(job, "failed", error=NOT_RECORDED)
        await self._persist(
            failed,
            "settle its tool part",
            lambda: self._chats.update(job.chat_id, lambda record: settle_job(record, failed)),
        )
        raise StorageError(f"job {job.id}: {NOT_RECORDED}")

    def _start(self, job: Job, agent: SubAgent, args: JobArgs, context: SubAgentContext) -> None:
        active = _Active(anyio.CancelScope(), anyio.Event())
        self._active[job.id] = active
        limiter, users = self._per_chat.get(job.chat_id, (None, 0))
        limiter = limiter or anyio.CapacityLimiter(self._max_per_chat)
        self._per_chat[job.chat_id] = (limiter, users + 1)
        self._tg.start_soon(self._guarded, job, agent, args, context, active, name=f"job:{job.id}")

    async def _guarded(
        self, job: Job, agent: SubAgent, args: JobArgs, context: SubAgentContext, active: _Active
    ) -> None:
        try:
            with active.scope:
                await self._run(job, agent, args, context)
        except Exception:  # last resort: an escaping error would cancel the whole app
            log.exception("[job %s] unexpected error in the runner", job.id)
        finally:
            limiter, users = self._per_chat.pop(job.chat_id)
            if users > 1:
                self._per_chat[job.chat_id] = (limiter, users - 1)
            with anyio.CancelScope(shield=True):
                await self._release(job.id)  # its end is saved (or could not be)
            del self._active[job.id]
            active.done.set()

    async def _release(self, job_id: str) -> None:
        if self._locks is None:
            return
        try:
            await self._locks.release(job_id)
        except Exception as exc:  # a lost connection has released it already
            log.warning("[job %s] its lock was not released: %s", job_id, exc)

    @asynccontextmanager
    async def _slot(self, chat_id: str) -> AsyncIterator[None]:
        # Per chat first, so one busy chat's queue never holds global slots while waiting.
        async with self._per_chat[chat_id][0], self._global:
            yield

    async def _run(
        self, job: Job, agent: SubAgent, args: JobArgs, context: SubAgentContext
    ) -> None:
        try:
            if self._on_start is not None:
                await self._on_start(job)
            async with self._slot(job.chat_id):
                job = msgspec.structs.replace(job, status="running", started_at=self._clock.now())
                await self._jobs.save(job)
                log.info("[job %s] running", job.id)
                with anyio.fail_after(self._timeout_s):
                    result = await agent.run(args, context)
            final = self._finished(job, "done", result=result, audit=context.audit or msgspec.UNSET)
            log.info("[job %s] done", job.id)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._settle(self._finished(job, "cancelled", error=CANCELLED))
            log.info("[job %s] cancelled", job.id)
            raise
        except TimeoutError:
            final = self._finished(job, "failed", error=f"timed out after {self._timeout_s:g} s")
            log.warning("[job %s] %s", job.id, final.error)
        except HarnessError as exc:
            final = self._finished(job, "failed", error=_describe(exc))
            log.warning("[job %s] failed: %s", job.id, exc)  # the detail, for the operator
        except Exception as exc:
            final = self._finished(job, "failed", error=_describe(exc))
            log.exception("[job %s] failed: %s", job.id, final.error)
        with anyio.CancelScope(shield=True):
            await self._settle(final)
        try:
            await self._on_update(final)
        except Exception:
            log.exception("[job %s] on_update failed", job.id)

    def _finished(self, job: Job, status: str, **changes: object) -> Job:
        return msgspec.structs.replace(job, status=status, finished_at=self._clock.now(), **changes)

    async def _settle(self, job: Job) -> None:
        """Save the final job and rewrite its tool part; each step is tried again while the
        store is briefly unreachable, and its failure is logged."""
        await self._persist(job, f"save the {job.status} job", lambda: self._jobs.save(job))
        await self._persist(
            job,
            "settle its tool part",
            lambda: self._chats.update(job.chat_id, lambda record: settle_job(record, job)),
        )

    async def _persist(self, job: Job, what: str, write: Callable[[], Awaitable[object]]) -> bool:
        """`write` (idempotent: an upsert, a settle of a settled part changes nothing);
        whether it was written."""
        for pause in (*SETTLE_PAUSES, None):
            try:
                await write()
                return True
            except StorageError as exc:
                if not exc.retryable or pause is None:
                    log.error("[job %s] could not %s: %s", job.id, what, exc)
                    return False
                log.warning("[job %s] could not %s (%s); again in %g s", job.id, what, exc, pause)
                await anyio.sleep(pause)
            except Exception as exc:
                log.error("[job %s] could not %s: %s", job.id, what, exc)
                return False
        return False

    async def recover(self, *, others: TurnClaims | None = None) -> list[Job]:
        """At start-up: fail the jobs a crash left pending/running, settle every open job
        tool part; the jobs failed here (`JobRecovery.at_start`: beside `others`, only
        those no live process holds)."""
        return await self._recovery.at_start(others)

    async def sweep(self, claims: TurnClaims) -> list[Job]:
        """Beside other processes: fail the jobs a dead one left (`JobRecovery.sweep`)."""
        return await self._recovery.sweep(claims)

    async def sweep_forever(
        self,
        claims: TurnClaims,
        on_ended: Callable[[list[Job]], None],
        interval_s: float = ORPHAN_SWEEP_S,
    ) -> None:
        """Every `interval_s`: `sweep`, the jobs failed there handed to `on_ended`; a sweep
        that fails (the database away) is tried again at the next one."""
        while True:
            await anyio.sleep(interval_s)
            try:
                on_ended(await self.sweep(claims))
            except Exception as exc:
                log.warning("[job] the orphan sweep failed: %s", exc)

    async def shutdown(self) -> None:
        """Refuse new jobs, cancel queued and running ones (each is marked cancelled and its
        part set to output-error "cancelled"), and wait until all have stopped."""
        self._closed = True
        for active in list(self._active.values()):
            active.scope.cancel()
        await self.wait_idle()

    async def wait_idle(self) -> None:
        """Return once no job is queued or running (jobs submitted meanwhile included)."""
        while self._active:
            await next(iter(self._active.values())).done.wait()

    def active_ids(self) -> list[str]:
        """Ids of the jobs queued or running now."""
        return list(self._active)


def create_job_runner(
    chats: ChatStore,
    jobs: JobStore,
    task_group: TaskGroup,
    *,
    agents: Mapping[str, SubAgent],
    clock: Clock,
    ids: IdGen,
    on_update: OnUpdate,
    max_per_chat: int = 2,
    max_global: int = 4,
    timeout_s: float = 120.0,
    on_start: OnUpdate | None = None,
    on_submitted: OnSubmitted | None = None,
    locks: JobLocks | None = None,
) -> JobRunner:
    """A job runner whose jobs live on `task_group` (owned by the app's lifespan)."""
    return JobRunner(
        chats,
        jobs,
        task_group,
        agents=agents,
        clock=clock,
        ids=ids,
        on_update=on_update,
        max_per_chat=max_per_chat,
        max_global=max_global,
        timeout_s=timeout_s,
        on_start=on_start,
        on_submitted=on_submitted,
        locks=locks,
    )
