"""JobStore on PostgreSQL: one row per (learner, job), each save an upsert."""

from __future__ import annotations

import msgspec

from backend.core.errors import CorruptRecord, NotFound, StorageError
from backend.core.ids import require_id
from backend.store.keyed_locks import KeyedLocks
from backend.store.pg.database import Connection, JsonBytes, PgDatabase
from shared_contracts.jobs import Job

_SAVE = """
INSERT INTO jobs (learner_id, id, created_at, record) VALUES (%s, %s, %s, %s)
ON CONFLICT (learner_id, id)
DO UPDATE SET created_at = EXCLUDED.created_at, record = EXCLUDED.record
"""
_GET = "SELECT record FROM jobs WHERE learner_id = %s AND id = %s"
_ALL = "SELECT id, record FROM jobs WHERE learner_id = %s ORDER BY created_at, id"
_UNFINISHED = """
SELECT id, record FROM jobs
WHERE learner_id = %s AND COALESCE(record->>'status', 'pending') IN ('pending', 'running')
ORDER BY created_at, id
"""


class PgJobStore:
    """One learner's jobs; saves of one job keep their call order."""

    def __init__(self, db: PgDatabase, learner_id: str) -> None:
        self._db = db
        self._learner = require_id(learner_id, "learner id")
        self._locks = KeyedLocks()
        self._encoder = msgspec.json.Encoder()
        self._decoder = msgspec.json.Decoder(Job)

    async def save(self, job: Job) -> None:
        require_id(job.id, "job id")
        data = self._encoder.encode(job)
        try:
            self._decoder.decode(data)
        except msgspec.DecodeError as exc:
            raise StorageError(f"refusing to write an unreadable job: {exc}") from exc
        params = (self._learner, job.id, job.created_at, JsonBytes(data))

        async def upsert(conn: Connection) -> None:
            await conn.execute(_SAVE, params)

        async with self._locks.hold(job.id):
            await self._db.run(upsert, retry=False)

    async def get(self, job_id: str) -> Job:
        require_id(job_id, "job id")

        async def read(conn: Connection) -> Job:
            cur = await conn.execute(_GET, (self._learner, job_id))
            row = await cur.fetchone()
            if row is None:
                raise NotFound(f"job {job_id!r} not found")
            return self._decode(job_id, row[0])

        return await self._db.run(read, retry=True)

    async def list_all(self) -> list[Job]:
        """Every job, oldest first (created_at, then id)."""

        return await self._listed(_ALL)

    async def unfinished(self) -> list[Job]:
        """The pending and running jobs, oldest first (the ended ones are not read)."""
        return await self._listed(_UNFINISHED)

    async def _listed(self, sql: str) -> list[Job]:
        async def read(conn: Connection) -> list[Job]:
            cur = await conn.execute(sql, (self._learner,))
            return [self._decode(job_id, data) for job_id, data in await cur.fetchall()]

        return await self._db.run(read, retry=True)

    def _decode(self, job_id: str, data: bytes) -> Job:
        try:
            return self._decoder.decode(data)
        except msgspec.DecodeError as exc:
            raise CorruptRecord(f"jobs({self._learner}, {job_id})", str(exc)) from exc
