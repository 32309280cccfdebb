"""Learners' whole data copied into the database in one transaction (`harness migrate`):
every learner or none, each into an empty learner, the ledgers and traces keeping their
order. Uses COPY, so a data dir of any size is a few round trips."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec
from psycopg import AsyncCursor
from psycopg.rows import TupleRow

from backend.core.errors import AlreadyExists
from backend.core.ports import LEDGERS
from backend.store.invariants import LearnerData
from backend.store.pg.database import Connection, JsonBytes, PgDatabase
from backend.store.pg.pg_graph_store import table
from backend.store.pg.pg_verify import learners

_CHAT_COLUMNS = (
    "learner_id, id, version, bytes, title, created_at, updated_at, model, turns, messages, record"
)


async def import_learners(db: PgDatabase, data: Mapping[str, LearnerData]) -> None:
    """Copy each learner's data in; `AlreadyExists` (and nothing written) if any of them
    already has rows in the database."""
    taken = sorted(set(data) & set(await learners(db)))
    if taken:
        raise AlreadyExists(
            f"the database already holds data of learner(s) {', '.join(taken)}: "
            "migrate copies into learners that have none"
        )
    encoder = msgspec.json.Encoder()

    async def copy(conn: Connection) -> None:
        async with conn.transaction():
            for learner, contents in data.items():
                await _copy_learner(conn, encoder, learner, contents)

    await db.run(copy, retry=False)


async def _copy_learner(
    conn: Connection, encoder: msgspec.json.Encoder, learner: str, data: LearnerData
) -> None:
    cur = conn.cursor()
    async with cur.copy(f"COPY chats ({_CHAT_COLUMNS}) FROM STDIN".encode()) as copy:
        for chat in data.chats.values():
            record = encoder.encode(chat)
            await copy.write_row(
                (learner, chat.id, 1, len(record), chat.title, chat.created_at, chat.updated_at,
                 chat.model, chat.turns, len(chat.messages), JsonBytes(record))
            )  # fmt: skip
    async with cur.copy("COPY jobs (learner_id, id, created_at, record) FROM STDIN") as copy:
        for job in data.jobs.values():
            await copy.write_row((learner, job.id, job.created_at, JsonBytes(encoder.encode(job))))
    for name in LEDGERS:
        query = f"COPY {table(name)} (learner_id, pos, line) FROM STDIN".encode()
        async with cur.copy(query) as copy:
            for pos, line in enumerate(data.ledgers.get(name, []), 1):
                await copy.write_row((learner, pos, JsonBytes(encoder.encode(line))))
    await _copy_materials(cur, encoder, learner, data)
    async with cur.copy("COPY traces (learner_id, chat_id, pos, event) FROM STDIN") as copy:
        for chat_id, events in data.traces.items():
            for pos, event in enumerate(events, 1):
                await copy.write_row((learner, chat_id, pos, JsonBytes(encoder.encode(event))))


async def _copy_materials(
    cur: AsyncCursor[TupleRow], encoder: msgspec.json.Encoder, learner: str, data: LearnerData
) -> None:
    columns = "learner_id, id, created_at, record, text, original"
    async with cur.copy(f"COPY materials ({columns}) FROM STDIN".encode()) as copy:
        for material_id, stored in data.materials.items():
            m = stored.material
            await copy.write_row(
                (learner, material_id, m.created_at, JsonBytes(encoder.encode(m)),
                 JsonBytes(encoder.encode(stored.text)), stored.original)
            )  # fmt: skip
    columns = "learner_id, material_id, ord, page, heading, text"
    async with cur.copy(f"COPY material_chunks ({columns}) FROM STDIN".encode()) as copy:
        for material_id, stored in data.materials.items():
            for ord_, chunk in enumerate(stored.text.chunks):
                await copy.write_row(
                    (learner, material_id, ord_, chunk.page, chunk.heading, chunk.text)
                )
