"""`harness verify` on PostgreSQL: every learner's rows read raw and decoded strictly, the
same invariants as for files, plus what only tables can get wrong (gaps in a log's
positions, listing columns that disagree with their record, an outdated schema).
Read-only: it never migrates."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from backend.core.ports import LEDGER_TYPES, LEDGERS
from backend.store.errors import SchemaTooNew
from backend.store.invariants import (
    HasId,
    LearnerData,
    StoredMaterial,
    check_all,
    material_problems,
)
from backend.store.pg.database import Connection, PgDatabase
from backend.store.pg.migrations import code_version, schema_version
from backend.store.pg.pg_graph_store import table
from shared_contracts.chat import ChatRecord
from shared_contracts.jobs import Job
from shared_contracts.materials import Material, MaterialText
from shared_contracts.trace import AnyTraceEvent

R = TypeVar("R", bound=HasId)

_LEARNERS = (
    "SELECT learner_id FROM chats UNION SELECT learner_id FROM jobs"
    " UNION SELECT learner_id FROM traces UNION SELECT learner_id FROM materials"
    + "".join(f" UNION SELECT learner_id FROM {table(name)}" for name in LEDGERS)
    + " ORDER BY 1"
).encode()  # table names from the fixed ledger list, never from input


async def verify_database(db: PgDatabase) -> list[str]:
    """Every problem in the database as one line ("learner <id>: chats(<id>): ..."); empty
    when sound. `SchemaTooNew` if the database is ahead of this code."""
    version = await db.run(schema_version, retry=True)
    if version > code_version():
        raise SchemaTooNew(f"the database's schema is version {version}, newer than this code's")
    if version < code_version():
        return [f"schema version {version}, this code's is {code_version()}: start the server "
                "once (it migrates), then verify again"]  # fmt: skip
    problems = []
    for learner in await learners(db):
        _, found = await read_learner(db, learner)
        problems += [f"learner {learner}: {p}" for p in found]
    return problems


async def learners(db: PgDatabase) -> list[str]:
    """Every learner with a row anywhere."""

    async def read(conn: Connection) -> list[str]:
        cur = await conn.execute(_LEARNERS)
        return [row[0] for row in await cur.fetchall()]

    return await db.run(read, retry=True)


async def read_learner(db: PgDatabase, learner: str) -> tuple[LearnerData, list[str]]:
    """(what the learner's rows hold that decodes, the problems found); one snapshot."""

    async def read(conn: Connection) -> tuple[LearnerData, list[str]]:
        problems: list[str] = []
        async with conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            data = LearnerData(
                chats=await _chats(conn, learner, problems),
                jobs=await _records(conn, learner, "jobs", Job, problems),
                ledgers={
                    name: await _log(conn, learner, table(name), t, problems)
                    for name, t in LEDGER_TYPES.items()
                },
                traces=await _traces(conn, learner, problems),
                materials=await _materials(conn, learner, problems),
            )
        problems += check_all(table, data.chats, data.jobs, data.ledgers)
        return data, problems

    return await db.run(read, retry=True)


async def _chats(conn: Connection, learner: str, problems: list[str]) -> dict[str, ChatRecord]:
    chats = await _records(conn, learner, "chats", ChatRecord, problems)
    cur = await conn.execute(
        "SELECT id, title, created_at, updated_at, model, turns, messages FROM chats"
        " WHERE learner_id = %s",
        (learner,),
    )
    for chat_id, *columns in await cur.fetchall():
        r = chats.get(chat_id)
        if r is not None and columns != [
            r.title, r.created_at, r.updated_at, r.model, r.turns, len(r.messages),
        ]:  # fmt: skip
            problems.append(f"chats({chat_id}): its listing columns disagree with its record")
    return chats


async def _records(
    conn: Connection, learner: str, name: str, type_: type[R], problems: list[str]
) -> dict[str, R]:
    decoder = msgspec.json.Decoder(type_)
    query = f"SELECT id, record FROM {name} WHERE learner_id = %s ORDER BY id".encode()
    cur = await conn.execute(query, (learner,))
    out: dict[str, R] = {}
    for record_id, data in await cur.fetchall():
        try:
            record = decoder.decode(data)
        except msgspec.DecodeError as exc:
            problems.append(f"{name}({record_id}): does not decode: {exc}")
            continue
        if record.id != record_id:
            problems.append(f"{name}({record_id}): holds id {record.id!r}")
        out[record_id] = record
    return out


async def _log(
    conn: Connection, learner: str, name: str, type_: type[Any], problems: list[str]
) -> list[Any]:
    query = f"SELECT pos, line FROM {name} WHERE learner_id = %s ORDER BY pos".encode()
    cur = await conn.execute(query, (learner,))
    return _decoded(name, await cur.fetchall(), msgspec.json.Decoder(type_), problems)


async def _traces(
    conn: Connection, learner: str, problems: list[str]
) -> dict[str, list[AnyTraceEvent]]:
    cur = await conn.execute(
        "SELECT chat_id, pos, event FROM traces WHERE learner_id = %s ORDER BY chat_id, pos",
        (learner,),
    )
    by_chat: dict[str, list[tuple[int, bytes]]] = {}
    for chat_id, pos, event in await cur.fetchall():
        by_chat.setdefault(chat_id, []).append((pos, event))
    decoder = msgspec.json.Decoder(AnyTraceEvent)
    return {
        chat_id: _decoded(f"traces({chat_id})", rows, decoder, problems)
        for chat_id, rows in by_chat.items()
    }


async def _materials(
    conn: Connection, learner: str, problems: list[str]
) -> dict[str, StoredMaterial]:
    cur = await conn.execute(
        "SELECT id, record, text, original FROM materials WHERE learner_id = %s ORDER BY id",
        (learner,),
    )
    out: dict[str, StoredMaterial] = {}
    for material_id, record, text_data, original in await cur.fetchall():
        where = f"materials({material_id})"
        try:
            material = msgspec.json.decode(record, type=Material)
            text = msgspec.json.decode(text_data, type=MaterialText)
        except msgspec.DecodeError as exc:
            problems.append(f"{where}: does not decode: {exc}")
            continue
        if material.id != material_id:
            problems.append(f"{where}: holds id {material.id!r}")
        problems += material_problems(where, material, text)
        out[material_id] = StoredMaterial(material, text, bytes(original))
    cur = await conn.execute(
        "SELECT material_id, page, heading, text FROM material_chunks WHERE learner_id = %s"
        " ORDER BY material_id, ord",
        (learner,),
    )
    indexed: dict[str, list[tuple[int, str, str]]] = {}
    for material_id, page, heading, text in await cur.fetchall():
        indexed.setdefault(material_id, []).append((page, heading, text))
    for material_id, stored in out.items():
        chunks = [(c.page, c.heading, c.text) for c in stored.text.chunks]
        if indexed.get(material_id, []) != chunks:
            problems.append(f"materials({material_id}): its search rows differ from its text")
    return out


def _decoded(
    where: str,
    rows: list[tuple[int, bytes]],
    decoder: msgspec.json.Decoder[Any],
    problems: list[str],
) -> list[Any]:
    """Each row's line decoded, a problem for each that does not decode and for positions
    that are not 1, 2, 3, ..."""
    if [pos for pos, _ in rows] != list(range(1, len(rows) + 1)):
        problems.append(f"{where}: positions are not 1..{len(rows)} without gaps")
    out = []
    for pos, line in rows:
        try:
            out.append(decoder.decode(line))
        except msgspec.DecodeError as exc:
            problems.append(f"{where}:{pos}: does not decode: {exc}")
    return out
