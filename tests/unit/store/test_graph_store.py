"""JsonlGraphStore: incremental reads, torn-tail repair at every byte, corrupt middles, faults."""

from __future__ import annotations

import errno
import logging

import msgspec
import pytest

from backend.core.errors import CorruptRecord, StorageError
from backend.core.ports import LEDGERS, LedgerBatch, LedgerCursor
from backend.store.errors import DiskError
from backend.store.jsonl_graph_store import JsonlGraphStore
from tests.unit.store.doubles import FaultyFileOps, ShortWriteFileOps, SpyFileOps, failure
from tests.unit.store.factories import checkpoint, edge, event, prop

ENC = msgspec.json.Encoder()


def line(obj) -> bytes:
    return ENC.encode(obj) + b"\n"


def full_batch(i: int) -> LedgerBatch:
    return LedgerBatch(
        propositions=[prop(i), prop(i + 1)],
        edges=[edge(i)],
        events=[event(i)],
        sessions=[checkpoint(i)],
    )


async def read_all(store) -> LedgerBatch:
    batch, _ = await store.read_since(LedgerCursor())
    return batch


async def test_append_then_read_since_returns_only_new_lines(tmp_path):
    store = JsonlGraphStore(tmp_path)
    first, cursor = await store.read_since(LedgerCursor())
    assert first.is_empty()
    await store.append(full_batch(1))
    got, cursor = await store.read_since(cursor)
    assert got == full_batch(1)
    again, same = await store.read_since(cursor)
    assert again.is_empty()
    assert same == cursor
    await store.append(LedgerBatch(propositions=[prop(7)]))
    got, cursor2 = await store.read_since(cursor)
    assert got == LedgerBatch(propositions=[prop(7)])
    assert cursor2.get("propositions") == (tmp_path / "graph" / "propositions.jsonl").stat().st_size
    assert cursor2.get("edges") == cursor.get("edges")
    # A fresh store (a restart) reads the same lines back.
    assert (await read_all(JsonlGraphStore(tmp_path))).propositions == [prop(1), prop(2), prop(7)]


async def test_each_ledger_is_one_write_and_sessions_goes_last(tmp_path):
    spy = SpyFileOps()
    store = JsonlGraphStore(tmp_path, spy)
    spy.calls.clear()
    await store.append(full_batch(1))
    writes = [path.rsplit("/", 1)[1] for op, path in spy.calls if op == "write"]
    assert writes == [
        "propositions.jsonl",
        "edges.jsonl",
        "events.jsonl",
        "sessions.jsonl",
    ]  # one write per ledger, even with two propositions
    last_other_fsync = max(
        i for i, (op, p) in enumerate(spy.calls) if op == "fsync" and "sessions" not in str(p)
    )
    first_sessions_call = min(i for i, (_, p) in enumerate(spy.calls) if "sessions" in str(p))
    assert last_other_fsync < first_sessions_call


@pytest.mark.parametrize("ledger", ["propositions", "sessions"])
async def test_torn_tail_cut_at_every_byte_offset_recovers_every_complete_line(
    tmp_path, ledger, caplog
):
    items = (
        [prop(i) for i in range(3)]
        if ledger == "propositions"
        else [checkpoint(i) for i in range(3)]
    )
    torn = line(prop(9) if ledger == "propositions" else checkpoint(9))
    complete = b"".join(line(x) for x in items)
    path = tmp_path / "graph" / f"{ledger}.jsonl"
    JsonlGraphStore(tmp_path)  # creates the directory
    for cut in range(len(torn)):  # every proper prefix of the last line, newline excluded
        path.write_bytes(complete + torn[:cut])
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="harness.store"):
            store = JsonlGraphStore(tmp_path)
        assert getattr(await read_all(store), ledger) == items
        assert path.read_bytes() == complete
        if cut:
            assert f"{path}: truncated a torn tail of {cut} bytes" in caplog.text
        # Appending after recovery yields well-formed lines.
        await store.append(LedgerBatch(**{ledger: [items[0]]}))
        assert getattr(await read_all(JsonlGraphStore(tmp_path)), ledger) == [*items, items[0]]


async def test_undecodable_last_line_is_cut_too(tmp_path, caplog):
    store = JsonlGraphStore(tmp_path)
    await store.append(LedgerBatch(propositions=[prop(1)]))
    path = tmp_path / "graph" / "propositions.jsonl"
    good = path.read_bytes()
    with path.open("ab") as f:
        f.write(b'{"id": "p2", "statement": "half"}\n')  # terminated, but not a proposition
    with caplog.at_level(logging.WARNING, logger="harness.store"):
        reopened = JsonlGraphStore(tmp_path)
    assert path.read_bytes() == good
    assert (await read_all(reopened)).propositions == [prop(1)]
    assert "propositions.jsonl: truncated a torn tail" in caplog.text


async def test_a_long_last_line_is_repaired_beyond_the_read_window(tmp_path):
    big = msgspec.structs.replace(prop(1), statement="x" * 200_000)
    path = tmp_path / "graph" / "propositions.jsonl"
    await JsonlGraphStore(tmp_path).append(LedgerBatch(propositions=[prop(0), big]))
    complete = path.read_bytes()
    path.write_bytes(complete + line(big)[:150_000])
    assert (await read_all(JsonlGraphStore(tmp_path))).propositions == [prop(0), big]
    assert path.read_bytes() == complete


async def test_corrupt_middle_line_refuses_to_load_naming_file_and_line(tmp_path):
    path = tmp_path / "graph" / "events.jsonl"
    JsonlGraphStore(tmp_path)
    lines = [
        line(event(1)),
        line(event(2)),
        line(event(3)),
        b'{"id": "ev4", "oops\n',
        line(event(5)),
    ]
    path.write_bytes(b"".join(lines))
    store = JsonlGraphStore(tmp_path)  # the tail is fine, so opening succeeds
    with pytest.raises(CorruptRecord) as info:
        await read_all(store)
    assert info.value.path == str(path)
    assert info.value.line == 4
    assert f"{path}:4" in str(info.value)
    # From a cursor past line 2 the line number is still absolute.
    offset = len(lines[0]) + len(lines[1])
    with pytest.raises(CorruptRecord) as info:
        await store.read_since(LedgerCursor((("events", offset),)))
    assert info.value.line == 4
    assert path.read_bytes() == b"".join(lines)  # never rewritten


async def test_unknown_fields_in_a_ledger_line_are_tolerated(tmp_path):
    JsonlGraphStore(tmp_path)
    raw = msgspec.json.decode(line(prop(1)))
    raw["future_field"] = [1, 2]
    (tmp_path / "graph" / "propositions.jsonl").write_bytes(msgspec.json.encode(raw) + b"\n")
    assert (await read_all(JsonlGraphStore(tmp_path))).propositions == [prop(1)]


async def test_unreadable_lines_are_refused_before_any_file_call(tmp_path):
    spy = SpyFileOps()
    store = JsonlGraphStore(tmp_path, spy)
    spy.calls.clear()
    bad = msgspec.structs.replace(prop(1), id="../x")
    with pytest.raises(StorageError):
        await store.append(LedgerBatch(propositions=[bad]))
    assert spy.calls == []


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
@pytest.mark.parametrize("persistent", [False, True])
async def test_disk_fault_at_every_write_and_fsync_leaves_the_ledgers_as_before(
    tmp_path, code, persistent
):
    await JsonlGraphStore(tmp_path).append(full_batch(1))
    before = {
        n: (tmp_path / "graph" / f"{n}.jsonl").read_bytes()
        for n in ("propositions", "edges", "events", "sessions")
    }
    n = 0
    while True:
        n += 1
        faulty = FaultyFileOps(("write", "fsync", "fsync_dir"), n, code, persistent=persistent)
        store = JsonlGraphStore(tmp_path, faulty)
        batch = LedgerBatch(
            propositions=[prop(5)], events=[event(5)], mappings=[], sessions=[checkpoint(5)]
        )
        error = await failure(store.append(batch))
        if error is None:
            break
        assert isinstance(error, DiskError)
        assert error.errno_name == errno.errorcode[code]
        for name, data in before.items():
            assert (tmp_path / "graph" / f"{name}.jsonl").read_bytes() == data, (n, name)
        assert await read_all(store) == full_batch(1)  # the instance's sizes stay right
    assert n == 7  # a write and an fsync for each of the three ledgers, then success
    got = await read_all(JsonlGraphStore(tmp_path))
    assert got.propositions == [prop(1), prop(2), prop(5)]
    assert got.sessions == [checkpoint(1), checkpoint(5)]


async def test_short_write_is_an_error_and_is_rolled_back(tmp_path):
    await JsonlGraphStore(tmp_path).append(full_batch(1))
    path = tmp_path / "graph" / "propositions.jsonl"
    before = path.read_bytes()
    store = JsonlGraphStore(tmp_path, ShortWriteFileOps())
    with pytest.raises(DiskError):
        await store.append(LedgerBatch(propositions=[prop(5)]))
    assert path.read_bytes() == before
    assert await read_all(store) == full_batch(1)


async def test_a_read_with_nothing_new_touches_no_file(tmp_path):
    spy = SpyFileOps()
    store = JsonlGraphStore(tmp_path, spy)
    await store.append(full_batch(1))
    _, cursor = await store.read_since(LedgerCursor())
    spy.calls.clear()
    for _ in range(3):
        again, same = await store.read_since(cursor)
        assert again.is_empty() and same == cursor
    assert spy.calls == []
    await store.append(LedgerBatch(events=[event(9)]))
    got, _ = await store.read_since(cursor)
    assert got == LedgerBatch(events=[event(9)])


async def test_cursor_past_the_end_is_an_error(tmp_path):
    store = JsonlGraphStore(tmp_path)
    with pytest.raises(StorageError):
        await store.read_since(LedgerCursor((("edges", 10),)))


def test_ledger_names_match_the_batch_fields():
    assert set(LEDGERS) == set(LedgerBatch.__dataclass_fields__)
    assert LEDGERS[-1] == "sessions"


async def test_when_rollback_also_fails_the_store_rereads_the_disk(tmp_path, caplog):
    await JsonlGraphStore(tmp_path).append(full_batch(1))
    faulty = FaultyFileOps(("fsync", "truncate"), 2, errno.EIO, persistent=True)
    store = JsonlGraphStore(tmp_path, faulty)
    with caplog.at_level(logging.WARNING, logger="harness.store"):
        error = await failure(
            store.append(LedgerBatch(propositions=[prop(5)], sessions=[checkpoint(5)]))
        )
    assert isinstance(error, DiskError)
    assert "could not roll back" in caplog.text
    # Whole lines that could not be cut away are kept (at-least-once); reads stay aligned.
    assert await read_all(store) == await read_all(JsonlGraphStore(tmp_path))
    assert (await read_all(store)).propositions[-1] == prop(5)


async def test_read_only_leaves_a_torn_tail_on_disk_reads_before_it_and_refuses_appends(
    tmp_path,
):
    items = [prop(i) for i in range(3)]
    path = tmp_path / "graph" / "propositions.jsonl"
    JsonlGraphStore(tmp_path)  # creates the directory
    on_disk = b"".join(line(x) for x in items) + line(prop(9))[:20]
    path.write_bytes(on_disk)
    store = JsonlGraphStore(tmp_path, read_only=True)
    assert (await read_all(store)).propositions == items
    with pytest.raises(StorageError, match="read-only"):
        await store.append(LedgerBatch(propositions=[prop(4)]))
    assert path.read_bytes() == on_disk  # what verify reports is still there to see


def test_read_only_on_a_missing_graph_creates_nothing(tmp_path):
    JsonlGraphStore(tmp_path / "data", read_only=True)
    assert not (tmp_path / "data").exists()
