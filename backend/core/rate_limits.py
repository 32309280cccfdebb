"""`RateLimits` in one process's memory: the file store's (one process serves a data dir)
and an `AccountService`'s when it is given none. Pure: no IO, no scheduling point."""

from __future__ import annotations

from datetime import datetime, timedelta


def refilled(tokens: float, elapsed_s: float, burst: int, every_s: float) -> float:
    """A bucket's tokens `elapsed_s` after it held `tokens` (a clock set back refills none)."""
    return min(float(burst), tokens + max(0.0, elapsed_s) / every_s)


class MemoryRateLimits:
    """Buckets by key; once more than `max_keys` are tracked, the keys whose bucket is full
    again are forgotten (a missing key is a full bucket, so nothing changes)."""

    def __init__(self, *, max_keys: int = 10_000) -> None:
        self.max_keys = max_keys
        self._buckets: dict[str, tuple[float, datetime, datetime]] = {}
        """key → (tokens, when they were counted, when the bucket is full again)"""

    async def take(self, key: str, burst: int, every_s: float, now: datetime) -> float:
        tokens, stamp, _ = self._buckets.get(key, (float(burst), now, now))
        tokens = refilled(tokens, (now - stamp).total_seconds(), burst, every_s)
        wait_s = 0.0 if tokens >= 1.0 else (1.0 - tokens) * every_s
        if not wait_s:
            tokens -= 1.0
        full_at = now + timedelta(seconds=(burst - tokens) * every_s)
        self._buckets[key] = (tokens, now, full_at)
        if len(self._buckets) > self.max_keys:
            self._buckets = {k: v for k, v in self._buckets.items() if v[2] > now}
        return wait_s

    def __len__(self) -> int:
        return len(self._buckets)
