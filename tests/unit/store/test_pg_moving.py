"""`harness migrate`'s copy (files → PostgreSQL) and `harness verify` on the database."""

from __future__ import annotations

import psycopg
import pytest

from backend.core.errors import AlreadyExists
from backend.core.ports import LedgerBatch, LedgerCursor
from backend.server.stores import (
    LOCAL_LEARNER,
    DataDirUnsound,
    FileStoreFactory,
    migrate_into_database,
    open_store_factory,
    verify_database_at,
)
from backend.store.pg.migrations import code_version
from tests.unit.store.factories import T0, chat, checkpoint, event, job, prop
from tests.unit.store.test_port_contracts import events, lesson_material
from tests.unit.store.test_verify import sound


def sql(url: str, query: str, *params) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(query, params or None)


async def two_learners(tmp_path) -> FileStoreFactory:
    """The local learner's sound data dir (test_verify's) and a second learner beside it."""
    await sound(tmp_path)
    files = FileStoreFactory(tmp_path / "data")
    other = files.for_learner("learner-b")
    await other.chats.create(chat("chat-9", messages=3))
    await other.traces.append("chat-9", events(0, 5))
    await other.graph.append(LedgerBatch(propositions=[prop(1)], events=[event(1)]))
    await files.for_learner(LOCAL_LEARNER).traces.append("chat-1", events(0, 3))
    await files.for_learner(LOCAL_LEARNER).materials.add(*lesson_material("mat-1"))
    return files


async def everything(stores, chat_ids):
    batch, _ = await stores.graph.read_since(LedgerCursor())
    return (
        await stores.materials.list_all(),
        [await stores.materials.text(m.id) for m in await stores.materials.list_all()],
        await stores.search.search("numerators"),
        {c: await stores.chats.get(c) for c in chat_ids},
        await stores.chats.list_summaries(),
        await stores.jobs.list_all(),
        batch,
        {c: await stores.traces.read(c) for c in chat_ids},
    )


async def test_every_learner_moves_over_equal_and_the_database_verifies(pg_cluster, tmp_path):
    files = await two_learners(tmp_path)
    url = pg_cluster.create_database()
    moved = await migrate_into_database(tmp_path / "data", url)
    assert [(m.learner, m.chats, m.jobs, m.trace_events, m.materials) for m in moved] == [
        (LOCAL_LEARNER, 2, 1, 3, 1),
        ("learner-b", 1, 0, 5, 0),
    ]
    async with open_store_factory(tmp_path, url) as pg:
        for learner, chat_ids in ((LOCAL_LEARNER, ["chat-1", "chat-2"]), ("learner-b", ["chat-9"])):
            moved_over = await everything(pg.for_learner(learner), chat_ids)
            on_files = await everything(files.for_learner(learner), chat_ids)
            assert moved_over[3:] == on_files[3:]
            assert moved_over[:2] == on_files[:2]  # materials and their texts
            # the same chunks found (each engine scores its own way)
            assert [(h.material_id, h.page, h.text) for h in moved_over[2]] == [
                (h.material_id, h.page, h.text) for h in on_files[2]
            ]
        # The moved data is live: writes go on from where the files stopped.
        await pg.for_learner("learner-b").graph.append(LedgerBatch(propositions=[prop(2)]))
    assert await verify_database_at(url) == []


async def test_moving_again_or_moving_unsound_files_copies_nothing(pg_cluster, tmp_path):
    await two_learners(tmp_path)
    url = pg_cluster.create_database()
    await migrate_into_database(tmp_path / "data", url)
    with pytest.raises(AlreadyExists, match="learner-b, local"):
        await migrate_into_database(tmp_path / "data", url)

    fresh = pg_cluster.create_database()
    (tmp_path / "data" / "learners" / "learner-b" / "chats" / "chat-9.json").write_bytes(b"{")
    with pytest.raises(DataDirUnsound) as info:
        await migrate_into_database(tmp_path / "data", fresh)
    assert any(p.startswith("learners/learner-b/chats/chat-9.json") for p in info.value.problems)
    assert await verify_database_at(fresh) == []  # migrated, and empty


async def test_verify_names_what_is_wrong_in_the_database(pg_cluster, tmp_path):
    url = pg_cluster.create_database()
    assert await verify_database_at(url) == [
        f"schema version 0, this code's is {code_version()}: start the server once (it"
        " migrates), then verify again"
    ]
    async with open_store_factory(tmp_path, url) as pg:
        stores = pg.for_learner("learner-a")
        await stores.chats.create(chat(messages=2))
        await stores.jobs.save(job())
        await stores.graph.append(
            LedgerBatch(propositions=[prop(1), prop(1)], sessions=[checkpoint(5, "chat-1")])
        )
        await stores.traces.append("chat-1", events(0, 2))
        await stores.materials.add(*lesson_material("mat-1"))
    sql(url, "UPDATE chats SET turns = 7 WHERE learner_id = 'learner-a'")
    sql(url, "UPDATE material_chunks SET text = 'x' WHERE learner_id = 'learner-a' AND ord = 1")
    sql(url, """UPDATE jobs SET record = '{"id": "job-1"}' WHERE learner_id = 'learner-a'""")
    sql(url, "UPDATE traces SET pos = 5 WHERE learner_id = 'learner-a' AND pos = 2")
    problems = await verify_database_at(url)
    assert problems == [
        "learner learner-a: chats(chat-1): its listing columns disagree with its record",
        "learner learner-a: jobs(job-1): does not decode: Object missing required field `chat_id`",
        "learner learner-a: traces(chat-1): positions are not 1..2 without gaps",
        "learner learner-a: materials(mat-1): its search rows differ from its text",
        "learner learner-a: graph_propositions: duplicate id 'p1'",
        "learner learner-a: graph_sessions: checkpoint of chat 'chat-1' is ahead of it "
        "(folded_at 5 > 2 messages)",
    ], problems


async def test_accounts_move_over_and_a_re_run_leaves_them_as_they_are(pg_cluster, tmp_path):
    from backend.store.pg.moving import copy_accounts, read_accounts
    from shared_contracts.accounts import Account

    await two_learners(tmp_path)
    data = tmp_path / "data"
    account = Account(
        username="ada", learner_id="learner-b", password_hash="$argon2id$x", created_at=T0
    )
    await FileStoreFactory(data).accounts.create(account)
    url = pg_cluster.create_database()
    await migrate_into_database(data, url)
    async with open_store_factory(tmp_path, url) as pg:
        assert await pg.accounts.find("ada") == account
        await copy_accounts(pg.db, [account])  # a re-run: equal, left alone
    (data / "accounts" / "users" / "bob.json").write_bytes(b"{")
    assert read_accounts(data)[1] and read_accounts(data)[1][0].startswith(
        "accounts/users/bob.json"
    )
    with pytest.raises(DataDirUnsound):
        await migrate_into_database(data, pg_cluster.create_database())
