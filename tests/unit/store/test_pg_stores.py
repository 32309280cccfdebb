"""What only the PostgreSQL adapters promise: versioned migrations, ledgers the database
itself keeps append-only, corrupt rows named, and several processes on one database."""

from __future__ import annotations

import anyio
import msgspec
import psycopg
import pytest

from backend.core.errors import CorruptRecord
from backend.core.ports import LedgerBatch, LedgerCursor
from backend.server.stores import (
    DatabaseError,
    DatabaseUnavailable,
    PgStoreFactory,
    SchemaTooNew,
    open_store_factory,
)
from backend.store.pg.migrations import code_version, known_migrations
from tests.pg_cluster import free_port
from tests.unit.store.factories import chat, event, prop
from tests.unit.store.test_port_contracts import bump, events, full_batch, new_learner


def sql(url: str, query: str, *params):
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(query, params or None)
        return cur.fetchall() if cur.description else None


@pytest.fixture
async def pg(pg_url, tmp_path):
    async with open_store_factory(tmp_path, pg_url) as factory:
        assert isinstance(factory, PgStoreFactory)
        yield factory


async def test_a_new_database_is_migrated_once_to_the_code_version(pg_cluster, tmp_path):
    url = pg_cluster.create_database()
    async with open_store_factory(tmp_path, url):
        pass
    rows = sql(url, "SELECT version, name FROM schema_version ORDER BY version")
    assert rows == [(m.version, m.name) for m in known_migrations()]
    assert len(rows) == code_version() >= 1
    async with open_store_factory(tmp_path, url):  # nothing pending: nothing applied
        pass
    assert sql(url, "SELECT count(*) FROM schema_version") == [(code_version(),)]


async def test_workers_starting_together_migrate_once(pg_cluster, tmp_path):
    url = pg_cluster.create_database()

    async def start() -> None:
        async with open_store_factory(tmp_path, url):
            pass

    async with anyio.create_task_group() as tg:
        for _ in range(4):
            tg.start_soon(start)
    assert sql(url, "SELECT count(*) FROM schema_version") == [(code_version(),)]


async def test_a_database_newer_than_the_code_is_refused_untouched(pg_cluster, tmp_path):
    url = pg_cluster.create_database()
    async with open_store_factory(tmp_path, url):
        pass
    sql(url, "INSERT INTO schema_version (version, name) VALUES (%s, 'from_the_future')",
        code_version() + 1)  # fmt: skip
    before = sql(url, "SELECT version, name FROM schema_version ORDER BY version")
    with pytest.raises(SchemaTooNew, match=f"version {code_version() + 1}, newer than"):
        async with open_store_factory(tmp_path, url):
            pass
    assert sql(url, "SELECT version, name FROM schema_version ORDER BY version") == before


async def test_an_unreachable_database_is_a_typed_error(tmp_path):
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/postgres"
    with anyio.fail_after(30), pytest.raises(DatabaseUnavailable) as info:
        async with open_store_factory(tmp_path, url):
            pass
    assert "database unavailable" in info.value.public_message()


async def test_the_ledgers_are_append_only_in_the_database_itself(pg, pg_url):
    learner = new_learner()
    await pg.for_learner(learner).graph.append(full_batch(1))
    for statement in (
        "UPDATE graph_events SET line = '{}' WHERE learner_id = %s",
        "DELETE FROM graph_sessions WHERE learner_id = %s",
    ):
        with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
            sql(pg_url, statement, learner)
    with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
        sql(pg_url, "TRUNCATE graph_propositions")
    got, _ = await pg.for_learner(learner).graph.read_since(LedgerCursor())
    assert got == full_batch(1)


async def test_a_corrupt_row_is_named_and_unknown_fields_are_tolerated(pg, pg_url):
    learner = new_learner()
    stores = pg.for_learner(learner)
    await stores.graph.append(LedgerBatch(events=[event(1), event(2)]))
    raw = msgspec.json.decode(msgspec.json.encode(prop(1)))
    raw["from_the_future"] = [1, 2]
    line = msgspec.json.encode(raw).decode()
    sql(pg_url, "INSERT INTO graph_propositions VALUES (%s, 1, %s)", learner, line)
    assert (await stores.graph.read_since(LedgerCursor()))[0].propositions == [prop(1)]
    sql(pg_url, """INSERT INTO graph_events VALUES (%s, 3, '{"id": "ev3"}')""", learner)
    with pytest.raises(CorruptRecord) as info:
        await stores.graph.read_since(LedgerCursor())
    assert info.value.line == 3 and f"graph_events({learner})" in str(info.value)
    with pytest.raises(CorruptRecord):  # from a cursor past line 1, still position 3
        await stores.graph.read_since(LedgerCursor((("events", 1),)))

    await stores.chats.create(chat())
    sql(pg_url, """UPDATE chats SET record = '{"id": 1}', version = 9 WHERE learner_id = %s""",
        learner)  # fmt: skip
    with pytest.raises(CorruptRecord, match=f"chats\\({learner}, chat-1\\)"):
        await stores.chats.get("chat-1")  # its cached version is not the row's any more


def _fresh(pg: PgStoreFactory, learner: str):
    """The learner's stores as a process that has nothing cached would have them."""
    return PgStoreFactory(pg.db).for_learner(learner)


async def test_a_sql_error_is_a_typed_storage_error(pg_cluster, tmp_path):
    pg_url = pg_cluster.create_database()  # its own: the constraint below holds for every row
    async with open_store_factory(tmp_path, pg_url) as pg:
        await _sql_error_is_typed(pg, pg_url, new_learner())


async def _sql_error_is_typed(pg, pg_url, learner):
    await pg.for_learner(learner).chats.create(chat())
    sql(pg_url, "ALTER TABLE chats ADD CONSTRAINT no_turns_over_2 CHECK (turns <= 2)")
    try:
        stores = pg.for_learner(learner)
        await stores.chats.update("chat-1", bump)
        await stores.chats.update("chat-1", bump)
        with pytest.raises(DatabaseError) as info:
            await stores.chats.update("chat-1", bump)
        assert not isinstance(info.value, DatabaseUnavailable)
        assert info.value.public_message() == (
            "the server could not save or read this chat (database error)"
        )
        assert (await _fresh(pg, learner).chats.get("chat-1")).turns == 2
        assert (await stores.chats.get("chat-1")).turns == 2  # nothing stale kept
    finally:
        sql(pg_url, "ALTER TABLE chats DROP CONSTRAINT no_turns_over_2")


async def test_two_processes_updating_one_chat_lose_nothing(pg, pg_url, tmp_path):
    learner = new_learner()
    await pg.for_learner(learner).chats.create(chat())
    calls = 0

    def counted(record):
        nonlocal calls
        calls += 1
        return bump(record)

    async with open_store_factory(tmp_path, pg_url) as other:
        here, there = pg.for_learner(learner), other.for_learner(learner)
        async with anyio.create_task_group() as tg:
            for i in range(30):
                tg.start_soon((here if i % 2 else there).chats.update, "chat-1", counted)
    assert (await pg.for_learner(learner).chats.get("chat-1")).turns == 30
    assert calls == 30  # the row lock serialised them: no update ran mutate twice


async def test_two_processes_appending_keep_every_ledger_dense_and_whole(pg, pg_url, tmp_path):
    learner = new_learner()
    here = pg.for_learner(learner)
    _, cursor = await here.graph.read_since(LedgerCursor())
    async with open_store_factory(tmp_path, pg_url) as other:
        there = other.for_learner(learner)
        async with anyio.create_task_group() as tg:
            for i in range(20):
                store = (here if i % 2 else there).graph
                tg.start_soon(
                    store.append, LedgerBatch(propositions=[prop(2 * i), prop(2 * i + 1)])
                )
                tg.start_soon((here if i % 2 else there).traces.append, "chat-1", events(i * 5, 5))
    got, cursor = await here.graph.read_since(cursor)
    ids = [p.id for p in got.propositions]
    assert sorted(ids, key=lambda s: int(s[1:])) == [f"p{i}" for i in range(40)]
    assert all(
        int(ids[k][1:]) % 2 == 0 and ids[k + 1] == f"p{int(ids[k][1:]) + 1}"
        for k in range(0, 40, 2)
    )
    assert cursor.get("propositions") == 40
    positions = sql(
        pg_url, "SELECT pos FROM graph_propositions WHERE learner_id = %s ORDER BY pos", learner
    )
    assert [p for (p,) in positions] == list(range(1, 41))
    traced = await here.traces.read("chat-1")
    assert all(traced[i + k].seq == traced[i].seq + k for i in range(0, 100, 5) for k in range(5))


async def test_graph_appends_of_another_process_are_read(pg, pg_url, tmp_path):
    learner = new_learner()
    here = pg.for_learner(learner)
    _, cursor = await here.graph.read_since(LedgerCursor())
    async with open_store_factory(tmp_path, pg_url) as other:
        await other.for_learner(learner).graph.append(full_batch(3))
    got, _ = await here.graph.read_since(cursor)
    assert got == full_batch(3)
