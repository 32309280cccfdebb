"""A learner's job locks on PostgreSQL: one session advisory lock per job, on this
process's locks session (`coordination.LockSession`), held by the process running the
job. A SIGKILLed worker's connection closes and the server releases its locks, so a
surviving worker finds the dead one's unfinished jobs unheld."""

from __future__ import annotations

import logging

from backend.store.pg.coordination import LockSession, lock_key

log = logging.getLogger("harness.store")


class PgJobLocks:
    """`JobLocks` over a locks session. Advisory locks are re-entrant within a session, so
    the jobs this process holds (or is taking) are kept here too: `adopt` never takes one
    of them, even while its `hold` is still on the wire."""

    def __init__(self, session: LockSession, learner_id: str) -> None:
        self._session = session
        self._learner = learner_id
        self._mine: set[str] = set()

    async def hold(self, job_id: str) -> None:
        self._mine.add(job_id)
        try:
            taken = await self._session.try_lock(self._key(job_id))
        except BaseException:
            self._mine.discard(job_id)
            raise
        if not taken:  # a new job's id: no other process knows it
            log.warning("[job %s] its lock is held elsewhere", job_id)

    async def release(self, job_id: str) -> None:
        self._mine.discard(job_id)
        await self._session.unlock(self._key(job_id))

    async def adopt(self, job_id: str) -> bool:
        if job_id in self._mine:
            return False
        self._mine.add(job_id)
        taken = False
        try:
            taken = await self._session.try_lock(self._key(job_id))
        finally:
            if not taken:
                self._mine.discard(job_id)
        return taken

    async def renew(self) -> None:
        await self._session.renew()

    def _key(self, job_id: str) -> int:
        return lock_key("job", self._learner, job_id)
