"""Rate limits of sign-ins and sign-ups: what an answer over the rate says (the buckets are
the `RateLimits` port: `backend.core.rate_limits` in memory, or a store's)."""

from __future__ import annotations

import math


def whole_seconds(delay_s: float) -> int:
    """A `Retry-After` value: at least 1."""
    return max(1, math.ceil(delay_s))
