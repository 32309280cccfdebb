"""TraceStore on PostgreSQL: one append-only log per (learner, chat).

Traces are diagnostics, appended at every turn boundary: like the file adapter's (no
fsync), their commits do not wait for the WAL flush (`synchronous_commit = off`). A
server crash may cost the last events; a lost client connection never does, and records
and ledgers stay durable.
"""

from __future__ import annotations

import msgspec

from backend.core.ids import require_id
from backend.store.keyed_locks import KeyedLocks
from backend.store.pg.database import Connection, PgDatabase
from backend.store.pg.lines import decode_rows, encode_lines
from shared_contracts.trace import AnyTraceEvent

TRACE_LOCK = 0x6C68_0003  # pg_advisory_xact_lock class: one appender per chat's log

_APPEND = """
INSERT INTO traces (learner_id, chat_id, pos, event)
SELECT %(learner)s, %(chat)s,
       coalesce((SELECT max(pos) FROM traces
                 WHERE learner_id = %(learner)s AND chat_id = %(chat)s), 0) + t.ord,
       t.event
FROM unnest(%(events)s::json[]) WITH ORDINALITY AS t(event, ord)
"""
_READ = "SELECT event FROM traces WHERE learner_id = %s AND chat_id = %s ORDER BY pos"


class PgTraceStore:
    """One learner's traces; the events of one append stay together and in order."""

    def __init__(self, db: PgDatabase, learner_id: str) -> None:
        self._db = db
        self._learner = require_id(learner_id, "learner id")
        self._locks = KeyedLocks()
        self._encoder = msgspec.json.Encoder()
        self._decoder = msgspec.json.Decoder(AnyTraceEvent)

    async def append(self, chat_id: str, events: list[AnyTraceEvent]) -> None:
        require_id(chat_id, "chat id")
        if not events:
            return
        lines = encode_lines(self._encoder, self._decoder, events, "trace event")
        params = {"learner": self._learner, "chat": chat_id, "events": lines}

        async def append(conn: Connection) -> None:
            async with conn.pipeline(), conn.transaction():
                await conn.execute("SET LOCAL synchronous_commit = off")
                await conn.execute(
                    "SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
                    (TRACE_LOCK, f"{self._learner}/{chat_id}"),
                )
                await conn.execute(_APPEND, params)

        async with self._locks.hold(chat_id):
            await self._db.run(append, retry=False)

    async def read(self, chat_id: str) -> list[AnyTraceEvent]:
        """Every event of a chat (none if it has no log)."""
        require_id(chat_id, "chat id")

        async def read(conn: Connection) -> list[AnyTraceEvent]:
            cur = await conn.execute(_READ, (self._learner, chat_id))
            lines = [row[0] for row in await cur.fetchall()]
            return decode_rows(self._decoder, lines, f"traces({self._learner}, {chat_id})", 1)

        return await self._db.run(read, retry=True)
