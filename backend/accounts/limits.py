"""Rate limits of sign-ins and sign-ups: per username and per client address."""

from __future__ import annotations

import math
import time
from collections.abc import Callable


class KeyedLimiter:
    """`burst` attempts per key at once, refilled at one per `every_s` seconds; keys whose
    bucket has refilled are forgotten once more than `max_keys` are tracked."""

    def __init__(
        self,
        burst: int,
        every_s: float,
        *,
        max_keys: int = 10_000,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self.burst = float(burst)
        self.every_s = every_s
        self.max_keys = max_keys
        self._timer = timer
        self._buckets: dict[str, tuple[float, float]] = {}  # key → (tokens, stamp)

    def take(self, key: str) -> float:
        """Spend one attempt of `key`: 0.0 if allowed, else the seconds until the next one."""
        now = self._timer()
        tokens, stamp = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - stamp) / self.every_s)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) * self.every_s
        self._buckets[key] = (tokens - 1.0, now)
        if len(self._buckets) > self.max_keys:
            self._forget_refilled(now)
        return 0.0

    def _forget_refilled(self, now: float) -> None:
        full_after = self.burst * self.every_s
        self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < full_after}


def whole_seconds(delay_s: float) -> int:
    """A `Retry-After` value: at least 1."""
    return max(1, math.ceil(delay_s))
