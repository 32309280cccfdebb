"""JsonChatStore: round trips, atomic replace under crashes and disk faults, lost-update safety."""

from __future__ import annotations

import errno
import json

import anyio
import msgspec
import pytest

from backend.core.errors import AlreadyExists, CorruptRecord, HarnessError, NotFound, StorageError
from backend.store.errors import DiskError
from backend.store.json_chat_store import JsonChatStore
from tests.unit.store.doubles import Crash, FaultyFileOps, SpyFileOps, failure
from tests.unit.store.factories import chat


def chat_files(root):
    return sorted(p.name for p in (root / "chats").iterdir())


async def test_create_get_and_duplicate(tmp_path):
    store = JsonChatStore(tmp_path)
    record = chat(messages=2)
    await store.create(record)
    assert await store.get("chat-1") == record
    with pytest.raises(AlreadyExists) as info:
        await store.create(chat(messages=5))
    assert isinstance(info.value, HarnessError)
    assert await store.get("chat-1") == record
    with pytest.raises(NotFound):
        await store.get("chat-2")
    with pytest.raises(NotFound):
        await store.update("chat-2", lambda r: r)


async def test_write_sequence_is_tmp_write_fsync_replace_fsync_dir(tmp_path):
    spy = SpyFileOps()
    store = JsonChatStore(tmp_path, spy)
    spy.calls.clear()
    await store.create(chat())
    ops = [op for op, _ in spy.calls if op not in ("size", "identity")]
    assert ops == ["open", "write", "fsync", "close", "replace", "fsync_dir"]
    tmp = spy.calls[1][1]
    assert str(tmp).startswith(str(tmp_path / "chats" / "chat-1.json."))
    assert str(tmp).endswith(".tmp")


async def test_concurrent_updates_lose_nothing(tmp_path):
    store = JsonChatStore(tmp_path)
    await store.create(chat())

    def bump(record):
        return msgspec.structs.replace(record, turns=record.turns + 1)

    async with anyio.create_task_group() as tg:
        for _ in range(60):
            tg.start_soon(store.update, "chat-1", bump)
    assert (await store.get("chat-1")).turns == 60


async def test_update_cannot_change_the_id_and_a_failing_mutate_writes_nothing(tmp_path):
    store = JsonChatStore(tmp_path)
    await store.create(chat())
    with pytest.raises(StorageError):
        await store.update("chat-1", lambda r: msgspec.structs.replace(r, id="other"))

    def boom(record):
        raise ValueError("mutate failed")

    with pytest.raises(ValueError):
        await store.update("chat-1", boom)
    assert await store.get("chat-1") == chat()
    assert chat_files(tmp_path) == ["chat-1.json"]


async def test_corrupt_file_is_reported_with_its_path_and_never_replaced(tmp_path):
    store = JsonChatStore(tmp_path)
    await store.create(chat())
    path = tmp_path / "chats" / "chat-1.json"
    path.write_bytes(b'{"id": "chat-1", "title": ')
    for op in (store.get("chat-1"), store.list_summaries(), store.update("chat-1", lambda r: r)):
        with pytest.raises(CorruptRecord) as info:
            await op
        assert info.value.path == str(path)
        assert str(path) in str(info.value)
    assert path.read_bytes() == b'{"id": "chat-1", "title": '


async def test_unknown_fields_on_disk_are_tolerated(tmp_path):
    store = JsonChatStore(tmp_path)
    raw = json.loads(msgspec.json.encode(chat(messages=1)))
    raw["from_the_future"] = {"x": 1}
    raw["messages"][0]["mood"] = "curious"
    (tmp_path / "chats" / "chat-1.json").write_text(json.dumps(raw))
    assert await store.get("chat-1") == chat(messages=1)
    assert [s.id for s in await store.list_summaries()] == ["chat-1"]


async def test_list_summaries_newest_first_then_by_id(tmp_path):
    store = JsonChatStore(tmp_path)
    for chat_id, created in [("b", 1), ("a", 1), ("c", 5), ("d", 0)]:
        await store.create(chat(chat_id, created=created, messages=created))
    summaries = await store.list_summaries()
    assert [s.id for s in summaries] == ["c", "b", "a", "d"]
    assert [s.messages for s in summaries] == [5, 1, 1, 0]


async def test_refuses_to_write_a_record_that_would_not_read_back(tmp_path):
    spy = SpyFileOps()
    store = JsonChatStore(tmp_path, spy)
    await store.create(chat())
    spy.calls.clear()
    good = chat(messages=1)
    bad_message = msgspec.structs.replace(good.messages[0], id="Bad Id")  # not validated here
    bad = msgspec.structs.replace(good, messages=[bad_message])
    with pytest.raises(StorageError):
        await store.update("chat-1", lambda r: bad)
    assert [op for op, _ in spy.calls if op in ("write", "replace")] == []


async def test_crash_between_temp_write_and_replace(tmp_path):
    await JsonChatStore(tmp_path).create(chat())
    faulty = FaultyFileOps(("replace",), 1, crash=True)
    store = JsonChatStore(tmp_path, faulty)
    with pytest.raises(Crash):
        await store.update("chat-1", lambda r: msgspec.structs.replace(r, title="new"))
    assert len(chat_files(tmp_path)) == 2  # the stray tmp the "killed" process left
    reopened = JsonChatStore(tmp_path)
    assert chat_files(tmp_path) == ["chat-1.json"]
    assert await reopened.get("chat-1") == chat()


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
@pytest.mark.parametrize("persistent", [False, True])
async def test_disk_fault_at_every_write_fsync_replace_keeps_the_old_record(
    tmp_path, code, persistent
):
    await JsonChatStore(tmp_path).create(chat())
    name = errno.errorcode[code]
    n = 0
    while True:
        n += 1
        faulty = FaultyFileOps(("write", "fsync", "replace"), n, code, persistent=persistent)
        store = JsonChatStore(tmp_path, faulty)
        error = await failure(
            store.update("chat-1", lambda r: msgspec.structs.replace(r, title="x"))
        )
        if error is None:
            assert not faulty.fired
            break
        assert isinstance(error, DiskError)
        assert error.errno_name == name
        assert name in str(error)
        assert await JsonChatStore(tmp_path).get("chat-1") == chat()
        assert chat_files(tmp_path) == ["chat-1.json"]  # the tmp was removed at once
    assert n == 4  # failed at the write, the fsync and the replace, then succeeded
    assert (await JsonChatStore(tmp_path).get("chat-1")).title == "x"


async def test_fault_at_directory_fsync_raises_and_leaves_a_decodable_record(tmp_path):
    await JsonChatStore(tmp_path).create(chat())
    store = JsonChatStore(tmp_path, FaultyFileOps(("fsync_dir",), 1, errno.EIO))
    with pytest.raises(DiskError) as info:
        await store.update("chat-1", lambda r: msgspec.structs.replace(r, title="new"))
    assert info.value.errno_name == "EIO"
    assert (await JsonChatStore(tmp_path).get("chat-1")).id == "chat-1"
    assert chat_files(tmp_path) == ["chat-1.json"]


async def test_peek_serves_a_held_chat_from_memory_as_of_its_last_completed_write(tmp_path):
    spy = SpyFileOps()
    store = JsonChatStore(tmp_path, spy, cache_bytes=0)  # nothing kept unless held
    await store.create(chat(messages=2))
    assert store.peek("chat-1") is None  # not held, no budget: not in memory
    async with store.held("chat-1"):
        first = await store.get("chat-1")
        calls = len(spy.calls)
        assert store.peek("chat-1") is first and len(spy.calls) == calls  # no I/O at all
        written = await store.update("chat-1", lambda r: msgspec.structs.replace(r, turns=7))
        assert store.peek("chat-1") is written
    assert store.peek("chat-1") is None or store.peek("chat-1") is written
    with pytest.raises(HarnessError):
        store.peek("../etc")
