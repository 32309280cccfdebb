"""A pipeline run costs O(session), not O(graph): counted work (ledger lines read back and
folded, nodes re-derived) is the same on a small and a ten-times larger synthetic graph; the
stats still equal a from-scratch derive; the view never sees lines that were not appended."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import pytest

from backend.agent.extraction.offline import OfflineAuditor, OfflineExtractor
from backend.agent.extraction.pipeline import ChatIndex, ExtractionPipeline
from backend.core.errors import StorageError
from backend.core.graph import FoldDelta, GraphState, SnapshotDeriver, derive_snapshot, fold
from backend.core.graph_state import fold_into
from backend.core.ports import LedgerBatch, LedgerCursor
from bench.synthetic import Sizes, generate
from shared_contracts.graph import GraphSnapshot, MappingLine
from tests.fakes import FixedClock, MemoryChatStore, MemoryGraphStore, SequentialIds
from tests.unit.test_graph_probes import lesson_record


class SpyDeriver(SnapshotDeriver):
    """Counts the fold deltas it is fed and the nodes each snapshot re-derived (a node
    object not shared with the previous snapshot was derived anew)."""

    def __init__(self) -> None:
        super().__init__()
        self.folded = 0
        self.rederived = 0
        self._previous: dict[str, object] = {}
        self.last: GraphSnapshot | None = None

    def apply(self, state: GraphState, delta: FoldDelta) -> None:
        self.folded += len(delta.nodes) + len(delta.edges) + len(delta.events)
        self.folded += len(delta.mappings)
        super().apply(state, delta)

    def snapshot(self, state: GraphState, as_of: datetime | None = None) -> GraphSnapshot:
        snap = super().snapshot(state, as_of)
        self.rederived += sum(1 for n in snap.nodes if self._previous.get(n.id) is not n)
        self._previous = {n.id: n for n in snap.nodes}
        self.last = snap
        return snap


@dataclass
class CountingGraph:
    """A graph store that counts the lines it hands out and can fail its next append."""

    inner: MemoryGraphStore = field(default_factory=MemoryGraphStore)
    lines_read: int = 0
    fail_next_append: bool = False
    fail_read_after_append: bool = False

    async def read_since(self, cursor: LedgerCursor) -> tuple[LedgerBatch, LedgerCursor]:
        if self.fail_read_after_append and len(self.inner.appends) > 2:
            self.fail_read_after_append = False
            raise StorageError("read failed")
        batch, cursor = await self.inner.read_since(cursor)
        self.lines_read += sum(len(getattr(batch, n)) for n in MemoryGraphStore.LEDGERS)
        return batch, cursor

    async def append(self, batch: LedgerBatch) -> None:
        if self.fail_next_append:
            self.fail_next_append = False
            raise StorageError("disk full")
        await self.inner.append(batch)


async def pipeline_on(sizes: Sizes) -> tuple[ExtractionPipeline, CountingGraph, SpyDeriver]:
    graph, deriver, chats = CountingGraph(), SpyDeriver(), MemoryChatStore()
    await graph.inner.append(generate(sizes, seed=42))
    for chat_id in ("c1", "c2"):
        await chats.create(lesson_record(chat_id))
    pipeline = ExtractionPipeline(
        chats,
        graph,
        OfflineExtractor(),
        OfflineAuditor(),
        clock=FixedClock(),
        ids=SequentialIds(),
        deriver=deriver,
    )
    return pipeline, graph, deriver


def from_scratch(graph: CountingGraph) -> GraphSnapshot:
    """As the run reports it: as of the graph's newest line."""
    state = fold(GraphState(), graph.inner.batch)
    return derive_snapshot(state, state.latest)


async def warm_run_work(sizes: Sizes) -> tuple[int, int, int]:
    """(lines read, lines folded, nodes re-derived) by the run after the first."""
    pipeline, graph, deriver = await pipeline_on(sizes)
    await pipeline.run("c1")  # the cold run folds and derives the whole graph once
    graph.lines_read = deriver.folded = deriver.rederived = 0
    report = await pipeline.run("c2")
    assert report.new_events == 5 and report.merged == 2
    assert deriver.last is not None and report.stats is deriver.last.stats
    assert report.stats == from_scratch(graph).stats
    return graph.lines_read, deriver.folded, deriver.rederived


async def test_a_runs_work_does_not_grow_with_the_graph() -> None:
    small = await warm_run_work(Sizes.for_nodes(200))
    large = await warm_run_work(Sizes.for_nodes(2_000))
    assert small == large
    lines_read, folded, rederived = large
    # Exactly the run's own batch is read back (2 mappings, 5 events, 1 edge, the
    # checkpoint) and folded; only the 2 nodes it mapped and probed are re-derived.
    assert (lines_read, folded, rederived) == (9, 8, 2)


async def test_the_cold_run_folds_the_graph_once_and_stats_match_a_full_derive() -> None:
    pipeline, graph, deriver = await pipeline_on(Sizes.for_nodes(200))
    first = await pipeline.run("c1")
    assert first.stats == from_scratch(graph).stats
    assert first.stats is not None and first.stats.nodes == 202
    assert deriver.rederived == first.stats.nodes


async def test_a_failed_append_leaves_the_view_untouched_and_the_retry_merges_the_same() -> None:
    pipeline, graph, deriver = await pipeline_on(Sizes.for_nodes(200))
    await pipeline.run("c1")
    graph.fail_next_append = True
    with pytest.raises(StorageError):
        await pipeline.run("c2")
    assert len(graph.inner.appends) == 2  # the synthetic graph and c1's run
    graph.lines_read = deriver.folded = 0
    report = await pipeline.run("c2")
    assert (report.new_nodes, report.merged, report.new_events) == (0, 2, 5)
    assert graph.lines_read == 9  # nothing from the failed run was folded meanwhile
    assert report.stats == from_scratch(graph).stats
    assert (await pipeline.run("c2")).nothing_to_do


async def test_a_read_failure_after_the_append_keeps_the_merge_and_omits_the_stats() -> None:
    pipeline, graph, _ = await pipeline_on(Sizes.for_nodes(200))
    await pipeline.run("c1")
    graph.fail_read_after_append = True
    report = await pipeline.run("c2")
    assert report.stats is None and (report.merged, report.new_events) == (2, 5)
    assert len(graph.inner.appends) == 3
    assert (await pipeline.run("c2")).nothing_to_do  # the next refresh folds it in


def scanned_known(state: GraphState, chat_id: str, limit: int) -> list[tuple[str, str | None]]:
    """The known nodes as a full scan of the state finds them (the reference)."""
    plan_of = {
        node: local.removeprefix("plan:")
        for (chat, local), node in state.local.items()
        if chat == chat_id and local.startswith("plan:")
    }
    mine = [node for (chat, node) in state.mappings if chat == chat_id]
    return [(node, plan_of.get(node)) for node in mine[-limit:] if node in state.nodes]


def test_the_chat_index_finds_what_a_full_scan_finds() -> None:
    lines = generate(Sizes(propositions=900, edges=0, events=0, chats=3), seed=7)
    first, second = LedgerBatch(), LedgerBatch()
    first.propositions.extend(lines.propositions[:500])
    second.propositions.extend(lines.propositions[500:])
    first.mappings.extend(lines.mappings[:400])
    second.mappings.extend(lines.mappings[400:])
    at = lines.mappings[0].at
    # A second local id for an already mapped node (the later plan id wins), and a mapping
    # whose node is not folded yet (skipped until it is).
    second.mappings.append(
        MappingLine(
            chat_id="chat-00000",
            local_id="plan:again",
            node_id="node-000299",
            how="statement",
            at=at,
        )
    )
    second.mappings.append(
        MappingLine(
            chat_id="chat-00001", local_id="plan:late", node_id="node-999999", how="created", at=at
        )
    )
    state, index = GraphState(), ChatIndex()
    for batch in (first, second):
        index.apply(state, fold_into(state, batch))
        for chat_id in ("chat-00000", "chat-00001", "chat-00002", "nobody"):
            got = [(k.id, k.plan_node) for k in index.known(state, chat_id)]
            assert got == scanned_known(state, chat_id, 300)
    mine = {k.id: k.plan_node for k in index.known(state, "chat-00000")}
    assert mine["node-000299"] == "again"
