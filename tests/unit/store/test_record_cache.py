"""The decoded-record cache: an unchanged record is not read again, any change to its file is
seen, a failed write leaves nothing stale, and an idle record is not kept."""

from __future__ import annotations

import errno
import gc
import os

import msgspec
import pytest

from backend.core.errors import NotFound, StorageError
from backend.store.fileops import OsFileOps
from backend.store.json_chat_store import JsonChatStore
from backend.store.json_job_store import JsonJobStore
from backend.store.record_cache import FileIdentity, RecordCache
from shared_contracts.chat import ChatRecord, Message
from tests.unit.store.doubles import FaultyFileOps, SpyFileOps
from tests.unit.store.factories import at, chat, job

READ = "read"


def reads_of(spy: SpyFileOps, chat_id: str) -> int:
    return sum(1 for op, path in spy.calls if op == READ and f"/{chat_id}.json" in str(path))


def on_disk(root, chat_id: str) -> ChatRecord:
    return msgspec.json.decode((root / "chats" / f"{chat_id}.json").read_bytes(), type=ChatRecord)


def reads(spy: SpyFileOps) -> int:
    return sum(1 for op, _ in spy.calls if op == READ)


def add_message(record):
    return msgspec.structs.replace(record, title=record.title + "+", updated_at=at(99))


async def test_an_unchanged_record_is_read_from_disk_once(tmp_path):
    spy = SpyFileOps()
    store = JsonChatStore(tmp_path, spy)
    await store.create(chat(messages=3))
    first = await store.get("chat-1")
    for _ in range(5):
        assert await store.get("chat-1") is first
    assert reads(spy) == 0  # created by this store: it already holds what it wrote


async def test_an_update_reads_nothing_and_returns_what_reads_back(tmp_path):
    spy = SpyFileOps()
    store = JsonChatStore(tmp_path, spy)
    await store.create(chat(messages=3))
    updated = await store.update("chat-1", add_message)
    assert reads(spy) == 0
    assert updated == on_disk(tmp_path, "chat-1")
    assert await store.get("chat-1") is updated


async def test_a_file_changed_behind_the_store_is_read_again(tmp_path):
    store = JsonChatStore(tmp_path)
    await store.create(chat(messages=1))
    await store.get("chat-1")
    # Another process replaces the file (same size is possible: the identity still differs).
    other = JsonChatStore(tmp_path)
    await other.update("chat-1", add_message)
    assert (await store.get("chat-1")).title == "title chat-1+"
    os.unlink(tmp_path / "chats" / "chat-1.json")
    with pytest.raises(NotFound):
        await store.get("chat-1")


@pytest.mark.parametrize("op", ["write", "fsync", "replace", "fsync_dir"])
async def test_a_failed_write_leaves_no_stale_record_behind(tmp_path, op):
    good = JsonChatStore(tmp_path)
    await good.create(chat(messages=2))
    faulty = FaultyFileOps((op,), 1, errno.EIO)
    store = JsonChatStore(tmp_path, faulty)
    before = await store.get("chat-1")
    with pytest.raises(StorageError):
        await store.update("chat-1", add_message)
    # Whatever the failed write left on disk (old file, or new content of unknown
    # durability after the replace) is what the next read returns — never a guess.
    now = on_disk(tmp_path, "chat-1")
    assert await store.get("chat-1") == now
    if op in ("write", "fsync"):
        assert now == before


def file_size(root, kind: str, record_id: str) -> int:
    return (root / kind / f"{record_id}.json").stat().st_size


async def test_an_idle_record_is_not_kept_beyond_the_byte_budget(tmp_path):
    spy = SpyFileOps()
    probe = JsonChatStore(tmp_path / "probe")
    await probe.create(chat("chat-00", messages=1))
    one = file_size(tmp_path / "probe", "chats", "chat-00")
    store = JsonChatStore(tmp_path, spy, cache_bytes=10 * one)  # room for ten such chats
    for i in range(20):
        await store.create(chat(f"chat-{i:02d}", messages=1))
    held = await store.get("chat-00")  # evicted long ago: read; a turn now holds it
    assert reads(spy) == 1
    for i in range(10, 20):
        await store.get(f"chat-{i:02d}")  # pushes chat-00 out of the budget
    gc.collect()
    before = reads(spy)
    assert await store.get("chat-00") is held  # held by someone: still cached
    assert (await store.get("chat-19")).id == "chat-19"  # within the budget
    assert (await store.get("chat-11")).id == "chat-11"
    assert reads(spy) == before
    await store.get("chat-05")  # neither held nor within the budget: not kept
    assert reads(spy) == before + 1


async def test_records_without_weak_references_are_cached_by_recency_only(tmp_path):
    spy = SpyFileOps()
    probe = JsonJobStore(tmp_path / "probe")
    await probe.save(job("job-00"))
    store = JsonJobStore(
        tmp_path, spy, cache_bytes=5 * file_size(tmp_path / "probe", "jobs", "job-00")
    )
    await store.save(job("job-01"))
    assert (await store.get("job-01")).id == "job-01"
    assert reads(spy) == 0
    for i in range(2, 20):
        await store.save(job(f"job-{i:02d}"))
    await store.get("job-19")  # within the budget
    assert reads(spy) == 0
    await store.get("job-01")  # long evicted: read from disk
    assert reads(spy) == 1


class Box:
    """A record stand-in that takes weak references."""


def test_the_budget_counts_file_bytes_and_keeps_the_most_recent():
    cache: RecordCache[object] = RecordCache(keep_bytes=100)
    boxes = {name: Box() for name in "abcd"}
    for n, name in enumerate("abc"):
        cache.put(name, FileIdentity(n, 40, 1, 1), boxes[name])
    assert cache.held_bytes == 80  # "a" went when "c" came (120 > 100)
    cache.put("b", FileIdentity(9, 60, 2, 2), boxes["b"])  # rewritten bigger: counted once
    assert cache.held_bytes == 100
    cache.put("d", FileIdentity(7, 500, 1, 1), boxes["d"])  # bigger than the whole budget
    assert cache.held_bytes == 0
    assert cache.get("d", FileIdentity(7, 500, 1, 1)) is boxes["d"]  # still held weakly
    cache.discard("d")
    assert cache.held_bytes == 0 and cache.get("d", FileIdentity(7, 500, 1, 1)) is None


def test_the_cache_matches_only_the_exact_file_identity():
    cache: RecordCache[object] = RecordCache(keep_bytes=1000)
    a = Box()
    ident = FileIdentity(1, 10, 100, 100)
    cache.put("x", ident, a)
    assert cache.get("x", ident) is a
    assert cache.get("x", ident._replace(mtime_ns=101)) is None
    assert cache.get("x", ident._replace(inode=2)) is None
    assert cache.get("y", ident) is None
    cache.discard("x")
    assert cache.get("x", ident) is None


def test_os_file_identity_changes_on_replace(tmp_path):
    fs = OsFileOps()
    path = tmp_path / "f.json"
    path.write_bytes(b"{}")
    first = fs.identity(str(path))
    tmp = tmp_path / "f.json.tmp"
    tmp.write_bytes(b"{}")
    os.replace(tmp, path)
    assert fs.identity(str(path)) != first


async def test_an_update_adding_an_unreadable_message_is_refused_and_nothing_changes(tmp_path):
    store = JsonChatStore(tmp_path)
    await store.create(chat(messages=2))
    before = await store.get("chat-1")
    bad = Message(id="m\n../x", role="user", turn=9, created_at=at(9), parts=[])  # not an Id

    def add_bad(record: ChatRecord) -> ChatRecord:
        return msgspec.structs.replace(record, messages=[*record.messages, bad])

    with pytest.raises(StorageError, match="unreadable chat"):
        await store.update("chat-1", add_bad)
    assert on_disk(tmp_path, "chat-1") == before
    assert await store.get("chat-1") is before


async def test_a_changed_old_message_is_checked_too(tmp_path):
    store = JsonChatStore(tmp_path)
    await store.create(chat(messages=3))

    def break_first(record: ChatRecord) -> ChatRecord:
        first = msgspec.structs.replace(record.messages[0], id="../../etc")
        return msgspec.structs.replace(record, messages=[first, *record.messages[1:]])

    with pytest.raises(StorageError, match="unreadable chat"):
        await store.update("chat-1", break_first)


async def test_a_pinned_record_stays_cached_through_its_updates(tmp_path):
    spy = SpyFileOps()
    store = JsonChatStore(tmp_path, spy, cache_bytes=2_000)  # a few small chats
    for i in range(20):
        await store.create(chat(f"chat-{i}", messages=1))
    async with store.pinned("chat-0"):
        await store.get("chat-0")  # evicted since its creation: one read
        assert reads_of(spy, "chat-0") == 1
        for i in range(1, 20):  # other chats push it out of the recent few...
            await store.update(f"chat-{i}", add_message)
            await store.update("chat-0", add_message)  # ...while its turn writes it
            await store.get(f"chat-{i}")
        gc.collect()
        assert (await store.get("chat-0")).title.count("+") == 19
        assert reads_of(spy, "chat-0") == 1  # never read again while pinned
    for i in range(1, 20):
        await store.get(f"chat-{i}")
    gc.collect()
    await store.get("chat-0")  # unpinned and idle: not kept
    assert reads_of(spy, "chat-0") == 2


async def test_a_held_chat_stays_decoded_between_turns_and_goes_when_released(tmp_path):
    spy = SpyFileOps()
    store = JsonChatStore(tmp_path, spy, cache_bytes=2_000)  # a few small chats
    for i in range(20):
        await store.create(chat(f"chat-{i}", messages=1))
    first = await store.get("chat-0")  # a learner opens it (its snapshot read it)
    async with store.held("chat-0"):
        for i in range(1, 20):  # other learners' chats push it out of the budget...
            await store.update(f"chat-{i}", add_message)
        del first
        gc.collect()
        await store.get("chat-0")  # ...but its session holds it
        assert reads_of(spy, "chat-0") == 1
        async with store.pinned("chat-0"):  # a turn within the session
            await store.update("chat-0", add_message)
        for i in range(1, 20):
            await store.update(f"chat-{i}", add_message)
        gc.collect()
        assert (await store.get("chat-0")).title.endswith("+")
        assert reads_of(spy, "chat-0") == 1
    for i in range(1, 20):
        await store.update(f"chat-{i}", add_message)
    gc.collect()
    await store.get("chat-0")  # the session closed: no longer kept
    assert reads_of(spy, "chat-0") == 2
