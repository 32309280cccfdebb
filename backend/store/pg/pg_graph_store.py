"""GraphStore on PostgreSQL: one append-only table per ledger, rows keyed by (learner,
position). A cursor holds, per ledger, the position of the last line read.

An append is one transaction (all ledgers or none, `sessions` last) under an advisory
lock per learner, so positions are dense and committed in order: a reader can never see
a line before an earlier one. A read is one statement (one snapshot), so a checkpoint is
never seen without the lines before it.
"""

from __future__ import annotations

from typing import Any

import msgspec
from psycopg import sql

from backend.core.errors import StorageError
from backend.core.ids import require_id
from backend.core.ports import LEDGER_TYPES, LEDGERS, LedgerBatch, LedgerCursor
from backend.store.pg.database import Connection, PgDatabase
from backend.store.pg.lines import decode_rows, encode_lines

GRAPH_LOCK = 0x6C68_0002  # pg_advisory_xact_lock class: one appender per learner's graph


def table(ledger: str) -> str:
    return f"graph_{ledger}"


_APPEND = {
    name: sql.SQL(
        "INSERT INTO {t} (learner_id, pos, line) "
        "SELECT %(learner)s, coalesce((SELECT max(pos) FROM {t} WHERE learner_id = %(learner)s), 0)"
        " + t.ord, t.line "
        "FROM unnest(%(lines)s::json[]) WITH ORDINALITY AS t(line, ord)"
    ).format(t=sql.Identifier(table(name)))
    for name in LEDGERS
}
# Per ledger: its lines after the cursor (kind 0), then its length (kind 1, line NULL).
_READ = sql.SQL(" UNION ALL ").join(
    sql.SQL(
        "(SELECT {i} AS ledger, 0 AS kind, pos, line FROM {t}"
        " WHERE learner_id = %(learner)s AND pos > %({after})s)"
        " UNION ALL (SELECT {i}, 1, coalesce(max(pos), 0), NULL FROM {t}"
        " WHERE learner_id = %(learner)s)"
    ).format(i=sql.Literal(i), t=sql.Identifier(table(name)), after=sql.SQL(name))
    for i, name in enumerate(LEDGERS)
) + sql.SQL(" ORDER BY ledger, kind, pos")


class PgGraphStore:
    """One learner's graph ledgers."""

    def __init__(self, db: PgDatabase, learner_id: str) -> None:
        self._db = db
        self._learner = require_id(learner_id, "learner id")
        self._encoder = msgspec.json.Encoder()
        self._decoders = {name: msgspec.json.Decoder(t) for name, t in LEDGER_TYPES.items()}

    async def read_since(self, cursor: LedgerCursor) -> tuple[LedgerBatch, LedgerCursor]:
        """Lines appended after `cursor` and the cursor past them: one round trip."""
        params: dict[str, Any] = {name: cursor.get(name) for name in LEDGERS}
        params["learner"] = self._learner

        async def read(conn: Connection) -> list[tuple[int, int, int, bytes | None]]:
            cur = await conn.execute(_READ, params)
            return await cur.fetchall()

        rows = await self._db.run(read, retry=True)
        lines: dict[str, list[bytes]] = {name: [] for name in LEDGERS}
        lengths: dict[str, int] = {}
        for ledger, kind, pos, line in rows:
            name = LEDGERS[ledger]
            if kind == 1:
                lengths[name] = pos
            elif line is not None:
                lines[name].append(line)
        out = LedgerBatch()
        for name in LEDGERS:
            start, end = cursor.get(name), lengths.get(name, 0)
            if start > end:
                raise StorageError(f"cursor {start} is past the end ({end}) of {table(name)}")
            where = f"{table(name)}({self._learner})"
            decoded = decode_rows(self._decoders[name], lines[name], where, start + 1)
            getattr(out, name).extend(decoded)
        return out, LedgerCursor(tuple((name, lengths.get(name, 0)) for name in LEDGERS))

    async def append(self, batch: LedgerBatch) -> None:
        """Append every ledger's lines in one transaction (sessions last)."""
        if batch.is_empty():
            return
        encoded = [
            (name, encode_lines(self._encoder, self._decoders[name], getattr(batch, name), name))
            for name in LEDGERS
            if getattr(batch, name)
        ]

        async def append(conn: Connection) -> None:
            async with conn.pipeline(), conn.transaction():
                await conn.execute(
                    "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (GRAPH_LOCK, self._learner)
                )
                for name, lines in encoded:
                    await conn.execute(_APPEND[name], {"learner": self._learner, "lines": lines})

        await self._db.run(append, retry=False)
