"""Single-flight per key on an anyio task group: at most one run in flight per key, and
triggers that arrive during a run coalesce into at most one follow-up run."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskGroup

log = logging.getLogger(__name__)

Run = Callable[[], Awaitable[object]]


class SingleFlight:
    """Errors in a run are logged and contained (they never cancel the task group);
    cancellation always propagates."""

    def __init__(self, task_group: TaskGroup, *, name: str = "extraction") -> None:
        self._tg = task_group
        self._name = name
        self._again: dict[str, Run] = {}
        self._idle: dict[str, anyio.Event] = {}
        self.runs: dict[str, int] = {}
        """How many runs each key has started (for tests and stats)."""

    def in_flight(self, key: str) -> bool:
        return key in self._idle

    def trigger(self, key: str, fn: Run) -> bool:
        """Start `fn` now (True), or queue it as the one follow-up of the run in flight."""
        if key in self._idle:
            self._again[key] = fn  # the latest trigger wins; they are all the same work
            return False
        self._idle[key] = anyio.Event()
        self._tg.start_soon(self._loop, key, fn)
        return True

    async def wait_idle(self, key: str) -> None:
        """Return once no run for `key` is in flight or queued."""
        while (event := self._idle.get(key)) is not None:
            await event.wait()

    async def _loop(self, key: str, fn: Run) -> None:
        try:
            next_fn: Run | None = fn
            while next_fn is not None:
                self.runs[key] = self.runs.get(key, 0) + 1
                try:
                    await next_fn()
                except anyio.get_cancelled_exc_class():
                    raise
                except Exception:
                    log.exception("[%s %s] run failed; the next trigger retries", self._name, key)
                next_fn = self._again.pop(key, None)
        finally:
            self._again.pop(key, None)
            self._idle.pop(key).set()
