"""`GraphReader`: follows the ledgers, folds in place and re-derives only what new lines
touched; every snapshot equals a from-scratch derive of everything appended so far."""

from __future__ import annotations

import gc
from datetime import UTC, datetime

import msgspec
import pytest

from backend.agent.extraction.channels import GraphReader, collector_paused
from backend.agent.extraction.ledger_view import LedgerView
from backend.core.graph import GraphState, derive_snapshot, fold
from backend.core.ports import LedgerBatch
from shared_contracts.graph import EventLine, MappingLine, PropositionLine, SessionCheckpoint
from tests.fakes import MemoryGraphStore

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def node(i: int) -> PropositionLine:
    return PropositionLine(id=f"n{i}", statement=f"fact {i}", chat_id="c1", created_at=T0)


def probe(i: int, node_id: str | None, ok: bool) -> EventLine:
    return EventLine(
        id=f"e{i}",
        ref=f"c1:call_{i}",
        chat_id="c1",
        node_id=node_id,
        kind="quiz_correct" if ok else "quiz_incorrect",
        at=T0,
        correct=ok,
    )


def from_scratch(graph: MemoryGraphStore) -> bytes:
    return msgspec.json.encode(derive_snapshot(fold(GraphState(), graph.batch)))


async def test_each_snapshot_equals_a_derive_of_everything_appended() -> None:
    graph = MemoryGraphStore()
    reader = GraphReader(graph)
    assert (await reader.snapshot()).nodes == []
    await graph.append(LedgerBatch(propositions=[node(1), node(2)], events=[probe(1, "n3", True)]))
    first = await reader.snapshot()
    assert msgspec.json.encode(first) == from_scratch(graph)
    assert first.stats.unattributed_probes == 1  # n3 does not exist yet
    assert await reader.snapshot() is first  # nothing appended: the same snapshot
    await graph.append(
        LedgerBatch(
            propositions=[node(3)],
            events=[probe(2, "n1", False), probe(1, "n1", True)],  # a duplicate ref folds away
            mappings=[MappingLine(chat_id="c2", local_id="x", node_id="n2", how="alias", at=T0)],
            sessions=[SessionCheckpoint(chat_id="c1", folded_at=4, run_id="r1", at=T0)],
        )
    )
    second = await reader.snapshot()
    assert msgspec.json.encode(second) == from_scratch(graph)
    assert second.stats.unattributed_probes == 0 and second.stats.events == 2
    assert {n.id: n.state for n in second.nodes} == {
        "n1": "shaky",
        "n2": "introduced",
        "n3": "verified",
    }
    assert await reader.folded_at("c1") == 4


async def test_the_view_folds_in_place_and_reports_each_delta() -> None:
    graph = MemoryGraphStore()
    seen: list[tuple[list[str], int]] = []
    view = LedgerView(
        graph, on_fold=lambda state, delta: seen.append((delta.nodes, len(delta.events)))
    )
    await graph.append(LedgerBatch(propositions=[node(1)]))
    state = await view.refresh()
    await graph.append(LedgerBatch(propositions=[node(1), node(2)], events=[probe(1, "n1", True)]))
    assert await view.refresh() is state and list(state.nodes) == ["n1", "n2"]
    await view.refresh()  # nothing new: no delta, no version bump
    assert seen == [(["n1"], 0), (["n2"], 1)] and view.version == 2


async def test_a_snapshot_leaves_the_garbage_collector_as_it_found_it() -> None:
    graph = MemoryGraphStore()
    await graph.append(LedgerBatch(propositions=[node(1)]))
    assert gc.isenabled()
    await GraphReader(graph).snapshot()
    assert gc.isenabled()
    gc.disable()
    try:
        await GraphReader(graph).snapshot()
        assert not gc.isenabled()  # a caller's own pause is kept
    finally:
        gc.enable()
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("boom")
    assert gc.isenabled()
