"""Single-flight per chat, the extraction trigger seam, and the graph read channel."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from msgspec.structs import replace

from backend.agent.extraction.channels import ExtractionService, GraphReader
from backend.agent.extraction.offline import OfflineAuditor, OfflineExtractor
from backend.agent.extraction.pipeline import ExtractionReport, create_extraction_pipeline
from backend.agent.extraction.single_flight import SingleFlight
from backend.core.errors import StorageError
from backend.core.ports import LedgerBatch
from tests.fakes import FixedClock, MemoryChatStore, MemoryGraphStore, SequentialIds
from tests.unit.test_graph_probes import lesson_record


async def test_ten_triggers_during_one_slow_run_coalesce_into_exactly_two_runs() -> None:
    release = anyio.Event()
    runs: list[int] = []

    async def slow() -> None:
        runs.append(len(runs))
        if len(runs) == 1:
            await release.wait()

    async with anyio.create_task_group() as tg:
        flight = SingleFlight(tg)
        started = [flight.trigger("c1", slow)]
        await anyio.lowlevel.checkpoint()
        assert flight.in_flight("c1")
        started += [flight.trigger("c1", slow) for _ in range(10)]
        release.set()
        await flight.wait_idle("c1")
    assert started == [True] + [False] * 10
    assert runs == [0, 1]
    assert flight.runs == {"c1": 2}


async def test_keys_run_independently_and_errors_are_contained(
    caplog: pytest.LogCaptureFixture,
) -> None:
    done: list[str] = []

    async def boom() -> None:
        raise RuntimeError("disk on fire")

    async def ok() -> None:
        done.append("ok")

    async with anyio.create_task_group() as tg:
        flight = SingleFlight(tg)
        assert flight.trigger("c1", boom)
        assert flight.trigger("c2", ok)
        await flight.wait_idle("c1")
        await flight.wait_idle("c2")
        assert flight.trigger("c1", ok)  # the failed key is free again
        await flight.wait_idle("c1")
    assert done == ["ok", "ok"]
    assert any("[extraction c1] run failed" in r.getMessage() for r in caplog.records)


async def test_cancellation_propagates_out_of_a_run() -> None:
    started = anyio.Event()

    async def forever() -> None:
        started.set()
        await anyio.sleep_forever()

    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg:
            flight = SingleFlight(tg)
            flight.trigger("c1", forever)
            await started.wait()
            tg.cancel_scope.cancel()
    assert not flight.in_flight("c1")


class Harness:
    def __init__(self, tg: Any, every_n: int = 3, graph: MemoryGraphStore | None = None) -> None:
        self.chats = MemoryChatStore()
        self.graph = graph or MemoryGraphStore()
        self.reader = GraphReader(self.graph)
        self.pipeline = create_extraction_pipeline(
            self.chats,
            self.graph,
            OfflineExtractor(),
            OfflineAuditor(),
            clock=FixedClock(),
            ids=SequentialIds(),
        )
        self.merged: list[ExtractionReport] = []
        self.service = ExtractionService(
            self.chats, self.reader, self.pipeline, tg, every_n=every_n, on_merged=self.on_merged
        )

    async def on_merged(self, chat_id: str, report: ExtractionReport) -> None:
        self.merged.append(report)


def first_messages(n: int) -> Any:
    record = lesson_record()
    return replace(record, messages=record.messages[:n])


async def test_trigger_fires_once_enough_answers_wait_and_pushes_the_merge() -> None:
    async with anyio.create_task_group() as tg:
        h = Harness(tg, every_n=3)
        await h.chats.create(first_messages(3))  # two graded quizzes
        assert await h.service.pending("c1") == 2
        assert not await h.service.maybe_trigger("c1")
        await h.chats.update("c1", lambda _: lesson_record())  # four graded quizzes
        assert await h.service.maybe_trigger("c1")
        await h.service.wait_idle("c1")
        assert [r.new_nodes for r in h.merged] == [2]
        assert await h.service.pending("c1") == 0
        assert not await h.service.maybe_trigger("c1")
        snapshot = await h.reader.snapshot()
        assert snapshot.stats.nodes == 2 and snapshot.stats.events == 5


async def test_flush_runs_now_and_coalesces_while_in_flight() -> None:
    async with anyio.create_task_group() as tg:
        h = Harness(tg, every_n=100)
        await h.chats.create(lesson_record())
        first = await h.service.flush("c1")
        second = await h.service.flush("c1")
        assert (first.started, first.pending_answers) == (True, 4)
        assert second.started is False
        await h.service.wait_idle("c1")
        assert h.service.runs("c1") == 2  # the coalesced follow-up found nothing to do
        assert len(h.merged) == 1 and len(h.graph.appends) == 1


class FlakyGraph(MemoryGraphStore):
    """Refuses the first append, as a full disk would."""

    def __init__(self) -> None:
        super().__init__()
        self.refusals = 1

    async def append(self, batch: LedgerBatch) -> None:
        if self.refusals:
            self.refusals -= 1
            raise StorageError("no space left on device")
        await super().append(batch)


async def test_a_failing_run_is_logged_contained_and_retried_by_the_next_trigger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with anyio.create_task_group() as tg:
        h = Harness(tg, every_n=1, graph=FlakyGraph())
        await h.chats.create(lesson_record())
        assert await h.service.maybe_trigger("c1")
        await h.service.wait_idle("c1")
        assert h.merged == [] and h.graph.appends == []
        assert await h.service.maybe_trigger("c1")
        await h.service.wait_idle("c1")
    assert len(h.merged) == 1 and len(h.graph.appends) == 1
    assert any("run failed" in r.getMessage() for r in caplog.records)


async def test_reader_reuses_the_derived_snapshot_until_the_ledgers_grow() -> None:
    async with anyio.create_task_group() as tg:
        h = Harness(tg)
        empty = await h.reader.snapshot()
        assert empty.nodes == [] and (await h.reader.context()).markdown == ""
        assert await h.reader.snapshot() is empty
        await h.chats.create(lesson_record())
        await h.service.flush("c1")
        await h.service.wait_idle("c1")
        grown = await h.reader.snapshot()
        assert grown is not empty and grown.stats.nodes == 2
        assert await h.reader.snapshot() is grown
        context = await h.reader.context()
        assert context.nodes_shown == 2 and "shaky" in context.markdown
        assert len(h.graph.appends) == 1  # reading never writes
