"""Ending the jobs no live process runs: at start-up (what a crash left pending or running)
and, beside other workers, periodically (what a worker that died left).

A job's runner holds the job's lock (`JobLocks`) from before the job is saved pending until
its end is saved, so a job that has not ended, is not this process's, and whose lock no
process holds has lost its runner (a sweep waits to see it so twice: a worker that lost
its connection with the database takes its locks again meanwhile). Such a job is failed
as interrupted — under its lock, adopted here, so two sweeping workers never both end it,
and read again first, so a job that ended meanwhile is left as it ended — and its open
tool part is settled once its chat is claimed here (a chat whose turn runs in another
process is tried again later).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Container
from functools import partial

import anyio
import msgspec

from backend.agent.jobs.parts import is_open_job_part, map_parts, settled
from backend.core.errors import NotFound
from backend.core.ports import ChatStore, Clock, JobLocks, JobStore, TurnClaims
from shared_contracts.chat import ChatRecord, ToolPart
from shared_contracts.jobs import TERMINAL_JOB_STATUSES, Job

log = logging.getLogger(__name__)

ORPHAN_SWEEP_S = 30.0
"""Beside other workers, how often a worker looks for the jobs a dead one left running (one
read of the learner's unfinished jobs, one lock try for each another worker runs)."""
INTERRUPTED = "interrupted by restart"
NEVER_RECORDED = "interrupted by restart (the job was never recorded)"


class JobRecovery:
    """Fails orphaned jobs and settles their parts (`active`: this process's job ids)."""

    def __init__(
        self,
        chats: ChatStore,
        jobs: JobStore,
        clock: Clock,
        *,
        active: Container[str],
        locks: JobLocks | None,
    ) -> None:
        self._chats, self._jobs, self._clock = chats, jobs, clock
        self._active = active
        self._locks = locks
        self._unsettled: dict[str, dict[str, Job]] = {}
        """Jobs failed by a sweep whose part is still open, by chat (a turn held it)."""
        self._suspects: set[str] = set()
        """Jobs the last sweep found unheld: failed if the next one finds them so again (a
        live process that lost its locks with the database takes them again meanwhile)."""

    async def at_start(self, others: TurnClaims | None) -> list[Job]:
        """Fail the jobs a crash left pending/running and settle every open job tool part
        (also those whose job was never recorded). Returns the jobs failed here.

        `others`: other processes serve these chats, so a job may be running in one of
        them: only those whose lock no process holds are failed, and only the parts of
        chats no turn holds now (claimed here for the moment) are settled — a part whose
        job was never recorded (its turn died while submitting it), or whose job has ended.
        With no job locks, beside others no job is failed."""
        interrupted: list[Job] = []
        known: dict[str, Job] = {}
        for job in sorted(await self._jobs.list_all(), key=lambda j: j.created_at):
            if job.status not in TERMINAL_JOB_STATUSES and job.id not in self._active:
                job, ended_here = await self._end_orphan(job, others)
                if ended_here:
                    interrupted.append(job)
            known[job.id] = job
        by_call = {(j.chat_id, j.tool_call_id): j for j in known.values()}
        for summary in await self._chats.list_summaries():
            try:
                record = await self._chats.get(summary.id)
                if any(is_open_job_part(p) for m in record.messages for p in m.parts):
                    await self._claimed_update(
                        summary.id, lambda r: self._recovered(r, known, by_call), others
                    )
            except Exception as exc:
                log.error("[chat %s] job part recovery failed: %s", summary.id, exc)
        return interrupted

    async def sweep(self, claims: TurnClaims) -> list[Job]:
        """Fail the unfinished jobs no live process holds (none of this process's), each
        seen unheld at two sweeps in a row, and settle their parts; returns the jobs failed
        here. One read of the unfinished jobs, one lock try for each not this process's."""
        if self._locks is None:
            return []
        await self._locks.renew()  # this process's own jobs first: held again if lost
        failed: list[Job] = []
        seen, self._suspects = self._suspects, set()
        for job in await self._jobs.unfinished():
            if job.id in self._active:
                continue
            if job.id not in seen:
                if await self._unheld(job.id):
                    self._suspects.add(job.id)  # ended at the next sweep if still unheld
                continue
            job, ended_here = await self._end_orphan(job, claims)
            if ended_here:
                failed.append(job)
                self._unsettled.setdefault(job.chat_id, {})[job.id] = job
        await self._settle_unsettled(claims)
        return failed

    async def _settle_unsettled(self, claims: TurnClaims) -> None:
        for chat_id, ended in list(self._unsettled.items()):
            try:
                if await self._claimed_update(chat_id, partial(_with_ended, ended=ended), claims):
                    del self._unsettled[chat_id]
            except NotFound:
                del self._unsettled[chat_id]
            except Exception as exc:  # tried again at the next sweep
                log.error("[chat %s] settling interrupted jobs failed: %s", chat_id, exc)

    async def _unheld(self, job_id: str) -> bool:
        """Whether no process holds the job's lock now (taken for a moment to tell)."""
        assert self._locks is not None
        if not await self._locks.adopt(job_id):
            return False
        with anyio.CancelScope(shield=True):
            await self._locks.release(job_id)
        return True

    async def _end_orphan(self, job: Job, others: TurnClaims | None) -> tuple[Job, bool]:
        """The job failed as interrupted when no live process runs it (alone: none does),
        else as it is; and whether it was failed here."""
        if others is None:
            return await self._interrupted(job), True
        if self._locks is None or not await self._locks.adopt(job.id):
            return job, False
        try:
            current = await self._jobs.get(job.id)  # its runner may have ended it meanwhile
            if current.status in TERMINAL_JOB_STATUSES:
                return current, False
            return await self._interrupted(current), True
        finally:
            with anyio.CancelScope(shield=True):
                await self._locks.release(job.id)

    async def _interrupted(self, job: Job) -> Job:
        job = msgspec.structs.replace(
            job, status="failed", finished_at=self._clock.now(), error=INTERRUPTED
        )
        await self._jobs.save(job)
        log.warning("[job %s] %s", job.id, INTERRUPTED)
        return job

    async def _claimed_update(
        self, chat_id: str, mutate: Callable[[ChatRecord], ChatRecord], others: TurnClaims | None
    ) -> bool:
        """`chats.update(chat_id, mutate)` with the chat claimed here, so no turn runs on it
        meanwhile in another process; False (nothing done) while one does."""
        if others is None:
            await self._chats.update(chat_id, mutate)
            return True
        if not await others.claim(chat_id):
            return False  # a turn runs on it elsewhere: its parts are that turn's
        try:
            await self._chats.update(chat_id, mutate)
        finally:
            await others.release(chat_id)
        return True

    def _recovered(
        self, record: ChatRecord, known: dict[str, Job], by_call: dict[tuple[str, str], Job]
    ) -> ChatRecord:
        def change(part: ToolPart) -> ToolPart | None:
            if not is_open_job_part(part):
                return None
            key = (record.id, part.tool_call_id)
            job = known.get(part.job_id) if part.job_id else by_call.get(key)
            if job is None:
                return msgspec.structs.replace(part, state="output-error", error=NEVER_RECORDED)
            if job.id in self._active or job.status not in TERMINAL_JOB_STATUSES:
                return None
            return settled(part, job)

        return map_parts(record, change)


def _with_ended(record: ChatRecord, ended: dict[str, Job]) -> ChatRecord:
    """`record` with the open parts of the `ended` jobs settled (no other part changes)."""

    def change(part: ToolPart) -> ToolPart | None:
        job = ended.get(part.job_id or "")
        return settled(part, job) if job is not None and is_open_job_part(part) else None

    return map_parts(record, change)
