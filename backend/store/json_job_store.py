"""JobStore on files: `root/jobs/<id>.json`, each save an atomic, durable replace."""

from __future__ import annotations

import os
from pathlib import Path

from backend.store.fileops import FileOps, OsFileOps
from backend.store.record_cache import CacheView
from backend.store.records import RecordDir
from shared_contracts.jobs import TERMINAL_JOB_STATUSES, Job

JOB_CACHE_BYTES = 1 << 20
"""Recently used job records kept decoded (a job record is a few KB)."""


class JsonJobStore:
    """One JSON file per job; saves of one job keep their call order."""

    def __init__(
        self,
        root: Path,
        fs: FileOps | None = None,
        *,
        cache_bytes: int = JOB_CACHE_BYTES,
        cache: CacheView[Job] | None = None,
    ) -> None:
        self._dir = RecordDir(
            os.path.join(root, "jobs"),
            "job",
            Job,
            fs or OsFileOps(),
            cache_bytes=cache_bytes,
            cache=cache,
        )

    async def save(self, job: Job) -> None:
        await self._dir.save(job.id, job)

    async def get(self, job_id: str) -> Job:
        return await self._dir.load(job_id)

    async def list_all(self) -> list[Job]:
        """Every job, oldest first (created_at, then id)."""
        jobs = await self._dir.load_all(self._dir.decode)
        return sorted(jobs, key=lambda j: (j.created_at, j.id))

    async def unfinished(self) -> list[Job]:
        """The pending and running jobs, oldest first (every file is read: one process on
        files has no other process's jobs to sweep, so only recovery asks)."""
        return [job for job in await self.list_all() if job.status not in TERMINAL_JOB_STATUSES]
