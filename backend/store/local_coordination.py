"""Turn claims, process locks, fan-out and job locks for one process (the file store):
nothing to claim, lock or tell beyond what the process already serialises itself. Each
call returns without a scheduling point, so a turn runs exactly as it did before these
ports existed (the goldens replay byte for byte)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from backend.core.ports import RemoteDelivery


class LocalTurnClaims:
    """One process: its own turn slot per chat is the whole claim."""

    async def claim(self, chat_id: str) -> bool:
        return True

    async def release(self, chat_id: str) -> None:
        return None

    async def elsewhere(self, chat_id: str) -> bool:
        return False


class LocalProcessLocks:
    """One process: no other process to exclude."""

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        yield

    async def join(self) -> bool:
        return True


class LocalFanOut:
    """One process: every socket is already reached through its own hub."""

    remote = False

    def publish(self, chat_id: str, frame: str | None) -> None:
        return None

    async def serve(self, deliver: RemoteDelivery) -> None:
        await anyio.sleep_forever()


class LocalJobLocks:
    """One process: a job's lock is whether this process said it runs the job (a job of
    a crash before it started is no one's)."""

    def __init__(self) -> None:
        self._mine: set[str] = set()

    async def hold(self, job_id: str) -> None:
        self._mine.add(job_id)

    async def release(self, job_id: str) -> None:
        self._mine.discard(job_id)

    async def adopt(self, job_id: str) -> bool:
        if job_id in self._mine:
            return False
        self._mine.add(job_id)
        return True

    async def renew(self) -> None:
        return None
