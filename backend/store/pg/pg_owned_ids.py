"""OwnedIds on PostgreSQL: one primary-key probe of the learner's own rows, no record read."""

from __future__ import annotations

from backend.core.ids import require_id
from backend.core.ports import OwnedKind
from backend.store.pg.database import Connection, PgDatabase

_PROBE: dict[OwnedKind, str] = {
    "chat": "SELECT EXISTS (SELECT 1 FROM chats WHERE learner_id = %s AND id = %s)",
    "job": "SELECT EXISTS (SELECT 1 FROM jobs WHERE learner_id = %s AND id = %s)",
    "material": "SELECT EXISTS (SELECT 1 FROM materials WHERE learner_id = %s AND id = %s)",
}


class PgOwnedIds:
    """The ids keyed by one learner."""

    def __init__(self, db: PgDatabase, learner_id: str) -> None:
        self._db = db
        self._learner = require_id(learner_id, "learner id")

    async def owns(self, kind: OwnedKind, item_id: str) -> bool:
        params = (self._learner, require_id(item_id, f"{kind} id"))
        query = _PROBE[kind]

        async def probe(conn: Connection) -> bool:
            cur = await conn.execute(query, params)
            row = await cur.fetchone()
            return bool(row and row[0])

        return await self._db.run(probe, retry=True)
