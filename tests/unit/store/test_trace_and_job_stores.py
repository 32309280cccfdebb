"""JsonlTraceStore (append, torn-tail tolerance) and JsonJobStore (atomic saves, listing)."""

from __future__ import annotations

import errno
import logging

import msgspec
import pytest

from backend.core.errors import CorruptRecord, NotFound
from backend.store.errors import DiskError
from backend.store.json_job_store import JsonJobStore
from backend.store.jsonl_trace_store import JsonlTraceStore
from shared_contracts.trace import AnyTraceEvent, ClockEvent, IdEvent, QuizEvent
from tests.unit.store.doubles import FaultyFileOps, SpyFileOps
from tests.unit.store.factories import T0, job


def events(start: int, count: int) -> list[AnyTraceEvent]:
    out: list[AnyTraceEvent] = []
    for seq in range(start, start + count):
        out.append(
            ClockEvent(seq=seq, value=T0)
            if seq % 3 == 0
            else IdEvent(seq=seq, prefix="chat", value=f"chat-{seq}")
            if seq % 3 == 1
            else QuizEvent(seq=seq, turn=1, tool_call_id="call_1", phase="issued")
        )
    return out


async def test_trace_append_and_read(tmp_path):
    store = JsonlTraceStore(tmp_path)
    assert await store.read("chat-1") == []
    spy = SpyFileOps()
    store = JsonlTraceStore(tmp_path, spy)
    spy.calls.clear()
    await store.append("chat-1", events(0, 4))
    await store.append("chat-1", events(4, 2))
    assert [op for op, _ in spy.calls].count("write") == 2  # one write per call
    assert await JsonlTraceStore(tmp_path).read("chat-1") == events(0, 6)


async def test_trace_read_tolerates_a_torn_tail_and_the_next_append_repairs_it(tmp_path, caplog):
    await JsonlTraceStore(tmp_path).append("chat-1", events(0, 3))
    path = tmp_path / "traces" / "chat-1.jsonl"
    whole = path.read_bytes()
    extra = msgspec.json.encode(events(3, 1)[0]) + b"\n"
    for cut in range(len(extra)):
        path.write_bytes(whole + extra[:cut])
        with caplog.at_level(logging.WARNING, logger="harness.store"):
            assert await JsonlTraceStore(tmp_path).read("chat-1") == events(0, 3)
    assert path.read_bytes() == whole + extra[: len(extra) - 1]  # reading never writes
    store = JsonlTraceStore(tmp_path)
    await store.append("chat-1", events(3, 2))
    assert await store.read("chat-1") == events(0, 5)


async def test_trace_bad_last_line_is_skipped_but_a_bad_middle_line_raises(tmp_path):
    await JsonlTraceStore(tmp_path).append("chat-1", events(0, 2))
    path = tmp_path / "traces" / "chat-1.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"type": "nope"}\n')
    assert await JsonlTraceStore(tmp_path).read("chat-1") == events(0, 2)
    path.write_bytes(b'{"type": "nope"}\n' + whole)
    with pytest.raises(CorruptRecord) as info:
        await JsonlTraceStore(tmp_path).read("chat-1")
    assert info.value.line == 1


async def test_trace_append_fault_leaves_the_log_as_before(tmp_path):
    await JsonlTraceStore(tmp_path).append("chat-1", events(0, 2))
    path = tmp_path / "traces" / "chat-1.jsonl"
    before = path.read_bytes()
    store = JsonlTraceStore(tmp_path, FaultyFileOps(("write",), 1, errno.ENOSPC))
    with pytest.raises(DiskError):
        await store.append("chat-1", events(2, 3))
    assert path.read_bytes() == before


async def test_trace_appends_are_not_fsynced(tmp_path):
    """Traces are diagnostics written at every turn boundary: one write, no fsync."""
    spy = SpyFileOps()
    store = JsonlTraceStore(tmp_path, spy)
    await store.append("chat-1", events(0, 2))
    await store.append("chat-1", events(2, 4))
    ops = [op for op, _ in spy.calls]
    assert ops.count("write") == 2
    assert "fsync" not in ops and "fsync_dir" not in ops
    assert len(await store.read("chat-1")) == len(events(0, 2)) + len(events(2, 4))


async def test_job_save_get_replace_and_list(tmp_path):
    store = JsonJobStore(tmp_path)
    with pytest.raises(NotFound):
        await store.get("job-1")
    await store.save(job("job-2", created=5))
    await store.save(job("job-1", created=1))
    done = msgspec.structs.replace(job("job-1", created=1), status="done")
    await store.save(done)
    assert await store.get("job-1") == done
    assert [j.id for j in await JsonJobStore(tmp_path).list_all()] == ["job-1", "job-2"]


async def test_job_save_fault_keeps_the_old_job(tmp_path):
    await JsonJobStore(tmp_path).save(job())
    for n in (1, 2, 3):
        store = JsonJobStore(tmp_path, FaultyFileOps(("write", "fsync", "replace"), n, errno.EIO))
        with pytest.raises(DiskError):
            await store.save(msgspec.structs.replace(job(), status="running"))
        assert await JsonJobStore(tmp_path).get("job-1") == job()
