"""The port contracts (`backend/core/ports.py`), one suite run for every backend: files
under a temp dir, and PostgreSQL (a throwaway server started once per session). Stores
come from `backend.server.stores`' factories, as the app gets them."""

from __future__ import annotations

import itertools
from datetime import timedelta

import anyio
import msgspec
import pytest

from backend.core.errors import AlreadyExists, HarnessError, InvalidId, NotFound, StorageError
from backend.core.ports import LedgerBatch, LedgerCursor
from backend.ingest import read_document
from backend.server.stores import (
    LOCAL_LEARNER,
    FileStoreFactory,
    StoreFactory,
    Stores,
    open_store_factory,
)
from shared_contracts.trace import AnyTraceEvent, ClockEvent, IdEvent
from tests.unit.store.factories import T0, chat, checkpoint, edge, event, job, prop
from tests.unit.store.test_material_store import LESSON

_learners = itertools.count()


def new_learner() -> str:
    """A learner no other test uses (the PostgreSQL database is shared by the session)."""
    return f"learner-{next(_learners)}-{id(_learners) % 9973}"


@pytest.fixture
def stores(factory: StoreFactory) -> Stores:
    return factory.for_learner(new_learner())


def bump(record):
    return msgspec.structs.replace(record, turns=record.turns + 1)


def events(start: int, count: int) -> list[AnyTraceEvent]:
    return [
        ClockEvent(seq=s, value=T0) if s % 2 else IdEvent(seq=s, prefix="chat", value=f"c-{s}")
        for s in range(start, start + count)
    ]


# -- ChatStore -------------------------------------------------------------------------


async def test_chat_create_get_update_and_missing(stores):
    record = chat(messages=2)
    await stores.chats.create(record)
    assert await stores.chats.get("chat-1") == record
    with pytest.raises(AlreadyExists) as info:
        await stores.chats.create(chat(messages=5))
    assert isinstance(info.value, HarnessError)
    assert await stores.chats.get("chat-1") == record
    written = await stores.chats.update("chat-1", bump)
    assert written.turns == 1
    assert await stores.chats.get("chat-1") == written
    with pytest.raises(NotFound):
        await stores.chats.get("chat-2")
    with pytest.raises(NotFound):
        await stores.chats.update("chat-2", bump)


async def test_chat_concurrent_updates_lose_nothing_and_mutate_runs_once_each(stores):
    await stores.chats.create(chat())
    calls = []

    def counted(record):
        calls.append(record.turns)
        return bump(record)

    async with anyio.create_task_group() as tg:
        for _ in range(40):
            tg.start_soon(stores.chats.update, "chat-1", counted)
    assert (await stores.chats.get("chat-1")).turns == 40
    assert calls == list(range(40))  # once per update, in call order


async def test_chat_update_cannot_change_the_id_and_a_failing_mutate_writes_nothing(stores):
    await stores.chats.create(chat())
    with pytest.raises(StorageError):
        await stores.chats.update("chat-1", lambda r: msgspec.structs.replace(r, id="other"))

    def boom(record):
        raise ValueError("mutate failed")

    with pytest.raises(ValueError):
        await stores.chats.update("chat-1", boom)
    assert await stores.chats.get("chat-1") == chat()
    assert [s.id for s in await stores.chats.list_summaries()] == ["chat-1"]


async def test_chat_refuses_a_record_that_would_not_read_back(stores):
    await stores.chats.create(chat(messages=1))
    good = await stores.chats.get("chat-1")
    bad = msgspec.structs.replace(good.messages[0], id="Bad Id")  # not validated on build
    with pytest.raises(StorageError):
        await stores.chats.update("chat-1", lambda r: msgspec.structs.replace(r, messages=[bad]))
    with pytest.raises(StorageError):
        await stores.chats.create(msgspec.structs.replace(chat("chat-2"), messages=[bad]))
    assert await stores.chats.get("chat-1") == good
    with pytest.raises(NotFound):
        await stores.chats.get("chat-2")


async def test_chat_summaries_newest_first_then_by_id(stores):
    assert await stores.chats.list_summaries() == []
    for chat_id, created in [("b", 1), ("a", 1), ("c", 5), ("d", 0)]:
        await stores.chats.create(chat(chat_id, created=created, messages=created))
    await stores.chats.update("a", bump)
    summaries = await stores.chats.list_summaries()
    assert [s.id for s in summaries] == ["c", "b", "a", "d"]
    assert [s.messages for s in summaries] == [5, 1, 1, 0]
    assert [s.turns for s in summaries] == [0, 0, 1, 0]
    assert summaries[0].title == "title c" and summaries[0].created_at == chat("c", 5).created_at
    assert {s.mode for s in summaries} == {"lesson"}


async def test_a_chat_summary_carries_its_mode_and_material(stores):
    """A review chat lists as one; a lesson's record, which writes no mode, lists as a lesson."""
    await stores.chats.create(msgspec.structs.replace(chat("r"), mode="review", material_id="m1"))
    await stores.chats.create(chat("l", created=1))
    summaries = {s.id: s for s in await stores.chats.list_summaries()}
    assert (summaries["r"].mode, summaries["r"].material_id) == ("review", "m1")
    assert (summaries["l"].mode, summaries["l"].material_id) == ("lesson", msgspec.UNSET)


async def test_chat_peek_and_held_serve_the_last_completed_write(stores):
    await stores.chats.create(chat(messages=2))
    async with stores.chats.held("chat-1"):
        first = await stores.chats.get("chat-1")
        assert stores.chats.peek("chat-1") == first
        async with stores.chats.pinned("chat-1"):
            written = await stores.chats.update("chat-1", bump)
            assert stores.chats.peek("chat-1") is written
            again = await stores.chats.update("chat-1", bump)
        assert stores.chats.peek("chat-1") is again
        assert await stores.chats.get("chat-1") == again
    with pytest.raises(HarnessError):
        stores.chats.peek("../etc")


async def test_chat_written_elsewhere_is_never_served_stale(factory, stores, tmp_path):
    """Another process (another factory on the same data) writes the chat a held session
    has in memory: the next read returns that write."""
    learner = new_learner()
    here = factory.for_learner(learner)
    await here.chats.create(chat())
    async with here.chats.held("chat-1"):
        assert (await here.chats.get("chat-1")).turns == 0
        async with _elsewhere(factory, tmp_path) as other:
            await other.for_learner(learner).chats.update("chat-1", bump)
        assert (await here.chats.get("chat-1")).turns == 1
        assert (await here.chats.update("chat-1", bump)).turns == 2


# -- JobStore --------------------------------------------------------------------------


async def test_job_save_get_replace_and_list_oldest_first(stores):
    with pytest.raises(NotFound):
        await stores.jobs.get("job-1")
    assert await stores.jobs.list_all() == []
    await stores.jobs.save(job("job-2", created=5))
    await stores.jobs.save(job("job-1", created=1))
    await stores.jobs.save(job("job-0", created=5))
    done = msgspec.structs.replace(job("job-1", created=1), status="done")
    await stores.jobs.save(done)
    assert await stores.jobs.get("job-1") == done
    assert [j.id for j in await stores.jobs.list_all()] == ["job-1", "job-0", "job-2"]


async def test_job_unfinished_are_the_pending_and_running_oldest_first(stores):
    assert await stores.jobs.unfinished() == []
    for i, status in enumerate(["running", "done", "pending", "failed", "cancelled"]):
        await stores.jobs.save(job(f"job-{i}", status=status, created=10 - i))
    assert [j.id for j in await stores.jobs.unfinished()] == ["job-2", "job-0"]
    await stores.jobs.save(job("job-2", status="failed", created=8))
    assert [j.status for j in await stores.jobs.unfinished()] == ["running"]


async def test_job_saves_of_one_job_keep_call_order(stores):
    statuses = ["pending", "running", "done"] * 10
    async with anyio.create_task_group() as tg:
        for status in statuses:
            tg.start_soon(stores.jobs.save, job(status=status))
    assert (await stores.jobs.get("job-1")).status == "done"


# -- TraceStore ------------------------------------------------------------------------


async def test_trace_append_and_read_in_order(stores):
    assert await stores.traces.read("chat-1") == []
    await stores.traces.append("chat-1", events(0, 4))
    await stores.traces.append("chat-1", [])
    await stores.traces.append("chat-1", events(4, 2))
    await stores.traces.append("chat-2", events(100, 1))
    assert await stores.traces.read("chat-1") == events(0, 6)
    assert await stores.traces.read("chat-2") == events(100, 1)


async def test_trace_concurrent_appends_keep_each_append_whole(stores):
    async with anyio.create_task_group() as tg:
        for i in range(10):
            tg.start_soon(stores.traces.append, "chat-1", events(i * 10, 10))
    read = await stores.traces.read("chat-1")
    assert sorted(e.seq for e in read) == list(range(100))
    starts = [read[i].seq for i in range(0, 100, 10)]
    assert all(read[i + k].seq == read[i].seq + k for i in range(0, 100, 10) for k in range(10))
    assert sorted(starts) == list(range(0, 100, 10))


# -- GraphStore ------------------------------------------------------------------------


def full_batch(i: int) -> LedgerBatch:
    return LedgerBatch(
        propositions=[prop(i), prop(i + 1)],
        edges=[edge(i)],
        events=[event(i)],
        sessions=[checkpoint(i)],
    )


async def test_graph_read_since_returns_only_new_lines(factory, stores):
    first, cursor = await stores.graph.read_since(LedgerCursor())
    assert first.is_empty()
    await stores.graph.append(LedgerBatch())
    await stores.graph.append(full_batch(1))
    got, cursor = await stores.graph.read_since(cursor)
    assert got == full_batch(1)
    again, same = await stores.graph.read_since(cursor)
    assert again.is_empty() and same == cursor
    await stores.graph.append(LedgerBatch(propositions=[prop(7)]))
    got, cursor2 = await stores.graph.read_since(cursor)
    assert got == LedgerBatch(propositions=[prop(7)])
    assert cursor2.get("edges") == cursor.get("edges")
    everything, _ = await stores.graph.read_since(LedgerCursor())
    assert everything.propositions == [prop(1), prop(2), prop(7)]


async def test_graph_refuses_unreadable_lines_and_appends_nothing(stores):
    await stores.graph.append(full_batch(1))
    bad = msgspec.structs.replace(prop(5), id="../x")
    with pytest.raises(StorageError):
        await stores.graph.append(LedgerBatch(events=[event(5)], propositions=[bad]))
    everything, _ = await stores.graph.read_since(LedgerCursor())
    assert everything == full_batch(1)


async def test_graph_cursor_past_the_end_is_an_error(stores):
    with pytest.raises(StorageError):
        await stores.graph.read_since(LedgerCursor((("edges", 10),)))


# -- learners --------------------------------------------------------------------------


async def test_a_learner_sees_nothing_of_another(factory):
    a, b = factory.for_learner(new_learner()), factory.for_learner(new_learner())
    await a.chats.create(chat(messages=1))
    await a.jobs.save(job())
    await a.traces.append("chat-1", events(0, 2))
    await a.graph.append(full_batch(1))
    with pytest.raises(NotFound):
        await b.chats.get("chat-1")
    with pytest.raises(NotFound):
        await b.chats.update("chat-1", bump)
    with pytest.raises(NotFound):
        await b.jobs.get("job-1")
    assert await b.chats.list_summaries() == []
    assert await b.jobs.list_all() == []
    assert await b.traces.read("chat-1") == []
    assert (await b.graph.read_since(LedgerCursor()))[0].is_empty()
    # The same ids are free in b, and b's writes leave a's data as it was.
    await b.chats.create(chat(messages=3))
    await b.graph.append(LedgerBatch(propositions=[prop(9)]))
    assert len((await a.chats.get("chat-1")).messages) == 1
    assert (await a.graph.read_since(LedgerCursor()))[0] == full_batch(1)


async def test_one_learner_gets_one_set_of_stores(factory):
    learner = new_learner()
    assert factory.for_learner(learner) is factory.for_learner(learner)
    assert factory.for_learner(LOCAL_LEARNER) is factory.for_learner(LOCAL_LEARNER)


@pytest.mark.parametrize("bad", ["../x", "", "A", "a/b", "x" * 65, "..", "a\x00b"])
async def test_hostile_ids_are_refused_before_any_store_call(factory, bad):
    with pytest.raises(InvalidId):
        factory.for_learner(bad)
    stores = factory.for_learner(new_learner())
    for op in (
        lambda: stores.chats.get(bad),
        lambda: stores.chats.update(bad, bump),
        lambda: stores.chats.create(msgspec.structs.replace(chat(), id=bad)),
        lambda: stores.jobs.get(bad),
        lambda: stores.jobs.save(msgspec.structs.replace(job(), id=bad)),
        lambda: stores.traces.append(bad, events(0, 1)),
        lambda: stores.traces.read(bad),
        lambda: stores.materials.get(bad),
        lambda: stores.materials.text(bad),
        lambda: stores.materials.original(bad),
        lambda: stores.materials.remove(bad),
        lambda: stores.materials.add(*_renamed(lesson_material("mat-1"), bad)),
        lambda: stores.search.page_text(bad, 1),
        lambda: stores.search.search("light", material_id=bad),
    ):
        with pytest.raises(InvalidId):
            await op()


class _elsewhere:  # reads as a place: `async with _elsewhere(...) as other`
    """A second factory on the same data, as another process would have."""

    def __init__(self, factory: StoreFactory, tmp_path) -> None:
        self._files = factory.data_dir if isinstance(factory, FileStoreFactory) else None
        self._url = None if self._files else factory.db.pool.conninfo  # type: ignore[attr-defined]
        self._tmp = tmp_path
        self._cm = None

    async def __aenter__(self) -> StoreFactory:
        if self._files is not None:
            return FileStoreFactory(self._files)
        self._cm = open_store_factory(self._tmp / "unused", self._url)
        return await self._cm.__aenter__()

    async def __aexit__(self, *exc) -> None:
        if self._cm is not None:
            await self._cm.__aexit__(*exc)


# -- MaterialStore and SearchPort ------------------------------------------------------


async def test_material_add_list_text_search_remove(stores):
    material, text, data = lesson_material("mat-1")
    await stores.materials.add(material, text, data)
    assert await stores.materials.list_all() == [material]
    assert await stores.materials.get("mat-1") == material
    assert await stores.materials.text("mat-1") == text
    assert await stores.materials.original("mat-1") == data
    hits = await stores.search.search("how do I add numerators?")
    assert hits[0].material_id == "mat-1" and "add the numerators" in hits[0].text
    assert (hits[0].heading, hits[0].title, hits[0].page) == ("Adding", "Fractions", 1)
    assert hits[0].score > 0
    assert await stores.search.page_text("mat-1", 1) == text.pages[0]
    with pytest.raises(NotFound):
        await stores.search.page_text("mat-1", 2)
    with pytest.raises(NotFound):
        await stores.search.page_text("mat-9", 1)
    with pytest.raises(AlreadyExists):
        await stores.materials.add(*lesson_material("mat-1"))

    await stores.materials.remove("mat-1")
    assert await stores.materials.list_all() == []
    assert await stores.search.search("numerators") == []
    for missing in (
        stores.materials.get("mat-1"),
        stores.materials.original("mat-1"),
        stores.materials.remove("mat-1"),
    ):
        with pytest.raises(NotFound):
            await missing


async def test_material_search_ranks_the_best_chunk_first_and_filters(stores):
    await stores.materials.add(*lesson_material("mat-a"))
    light = b"# Light\n\nLight and more light: light is what leaves need, light all day.\n"
    await stores.materials.add(*lesson_material("mat-b", light))
    sums = "\n\n".join(f"Paragraph {i} on numbers and sums." * 30 for i in range(6))
    await stores.materials.add(*lesson_material("mat-c", ("# Sums\n\n" + sums).encode()))
    hits = await stores.search.search("light")
    assert [h.material_id for h in hits][:2] == ["mat-b", "mat-a"]
    assert hits[0].score > hits[1].score
    only_a = await stores.search.search("light", material_id="mat-a")
    assert {h.material_id for h in only_a} == {"mat-a"}
    assert len(await stores.search.search("light", limit=1)) == 1
    assert await stores.search.search("light", limit=0) == []
    # newest first: their dates grow with their sizes here
    assert [m.id for m in await stores.materials.list_all()] == ["mat-c", "mat-a", "mat-b"]


@pytest.mark.parametrize(
    "query", ['"', "light OR", "NEAR(a b)", "col:light", "*", "a AND (", "^light", "-x", "", "&|!"]
)
async def test_material_search_takes_any_text_as_words(stores, query):
    await stores.materials.add(*lesson_material("mat-1"))
    assert isinstance(await stores.search.search(query), list)  # never a syntax error


async def test_materials_belong_to_their_learner(factory):
    a, b = factory.for_learner(new_learner()), factory.for_learner(new_learner())
    await a.materials.add(*lesson_material("mat-1"))
    assert await b.materials.list_all() == []
    assert await b.search.search("numerators") == []
    for op in (b.materials.get("mat-1"), b.materials.remove("mat-1")):
        with pytest.raises(NotFound):
            await op
    with pytest.raises(NotFound):
        await b.search.page_text("mat-1", 1)
    await b.materials.add(*lesson_material("mat-1", b"# Other\n\nSomething else entirely.\n"))
    assert (await a.materials.get("mat-1")).title == "Fractions"


def lesson_material(material_id: str, data: bytes = LESSON):
    doc = read_document(data, "lesson.md", max_bytes=1_000_000)
    material = doc.as_material(material_id, data, created_at=T0 + timedelta(seconds=len(data)))
    return material, doc.text, data


def _renamed(material, new_id):
    record, text, data = material
    return msgspec.structs.replace(record, id=new_id), text, data
