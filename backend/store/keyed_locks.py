"""One FIFO lock per key, kept only while someone holds or waits on it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio


class KeyedLocks:
    """`hold(key)` serialises the holders of one key in arrival order. The table holds a
    key's lock only while it is held or waited on, so it stays as small as the work in
    flight however many keys a long-running process has seen."""

    def __init__(self) -> None:
        self._locks: dict[str, anyio.Lock] = {}

    def __len__(self) -> int:
        return len(self._locks)

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Hold `key`'s lock for the block (cancellation while waiting included)."""
        lock = self._locks.get(key)
        if lock is None:
            # fast_acquire: a free lock is taken without a loop pass (a waiter still
            # queues FIFO); holders here always await I/O, so no one starves.
            lock = self._locks[key] = anyio.Lock(fast_acquire=True)
        try:
            async with lock:
                yield
        finally:
            # A release hands the lock straight to the next waiter (it stays locked), so
            # an unlocked lock with no waiters has no one left who could need it.
            idle = not lock.locked() and not lock.statistics().tasks_waiting
            if idle and self._locks.get(key) is lock:
                del self._locks[key]
