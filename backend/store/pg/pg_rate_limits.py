"""RateLimits on PostgreSQL: the `rate_limits` table (migration 0004), one bucket per key
shared by every worker, so N workers give an attacker no more attempts than one.

Each attempt is one statement (`INSERT ... ON CONFLICT (key) DO UPDATE ... RETURNING`):
the row is locked while it is refilled and spent, so concurrent attempts on the same key
from any worker count one after the other. Time is the caller's clock (`now`), never the
database's. Old rows: a row whose bucket is full again means what no row means, so the
first attempt a process takes, and then one at most every `SWEEP_EVERY` of its clock,
first deletes every such row; the table holds the keys tried within about the longest
refill time plus `SWEEP_EVERY`."""

from __future__ import annotations

from datetime import datetime, timedelta

from backend.store.pg.database import Connection, PgDatabase

SWEEP_EVERY = timedelta(minutes=10)

_ELAPSED_S = "greatest(0.0, extract(epoch FROM %(now)s - b.stamp)::float8)"  # set back: 0
_NEW = f"least(%(burst)s, b.tokens + {_ELAPSED_S} / %(every)s)"  # the tokens refilled by now
_LEFT = f"CASE WHEN {_NEW} >= 1 THEN {_NEW} - 1 ELSE {_NEW} END"
_TAKE = f"""
INSERT INTO rate_limits AS b (key, tokens, stamp, full_at, wait_s)
VALUES (%(key)s, %(burst)s - 1, %(now)s, %(now)s + make_interval(secs => %(every)s), 0)
ON CONFLICT (key) DO UPDATE SET
    tokens = {_LEFT},
    stamp = %(now)s,
    full_at = %(now)s + make_interval(secs => (%(burst)s - {_LEFT}) * %(every)s),
    wait_s = CASE WHEN {_NEW} >= 1 THEN 0 ELSE (1 - {_NEW}) * %(every)s END
RETURNING wait_s
"""
_SWEEP = "DELETE FROM rate_limits WHERE full_at <= %s"


class PgRateLimits:
    """Every key's bucket in one table (not any one learner's rows)."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db
        self._swept: datetime | None = None

    async def take(self, key: str, burst: int, every_s: float, now: datetime) -> float:
        sweep = self._swept is None or not (timedelta(0) <= now - self._swept < SWEEP_EVERY)
        params = {"key": key, "burst": float(burst), "every": float(every_s), "now": now}

        async def upsert(conn: Connection) -> float:
            if sweep:
                await conn.execute(_SWEEP, (now,))
            cur = await conn.execute(_TAKE, params)
            row = await cur.fetchone()
            assert row is not None  # an upsert with RETURNING returns its row
            return float(row[0])

        wait_s = await self._db.run(upsert, retry=False)
        if sweep:
            self._swept = now
        return wait_s
