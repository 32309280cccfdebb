"""The incremental read model: `SnapshotDeriver` fed fold deltas equals a from-scratch
derive (a reference copy of the original, obviously-correct derive) byte for byte, over
random batch sequences with duplicates, out-of-order times, ties and dangling ids."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import hypothesis.strategies as st
import msgspec
import pytest
from hypothesis import given, settings

from backend.core.graph import (
    PROBE_KINDS,
    GraphState,
    SnapshotDeriver,
    derive_snapshot,
    fold,
    fold_into,
    node_state,
)
from backend.core.graph_state import Layer
from backend.core.ports import LedgerBatch
from shared_contracts.graph import (
    EdgeLine,
    EventLine,
    Evidence,
    GraphEdge,
    GraphNode,
    GraphSession,
    GraphSnapshot,
    GraphStats,
    MappingLine,
    Probe,
    PropositionLine,
    SessionCheckpoint,
)

T0 = datetime(2025, 1, 1, tzinfo=UTC)
NODES = [f"n{i}" for i in range(4)]
CHATS = ["c0", "c1", "c2"]


def reference_snapshot(state: GraphState) -> GraphSnapshot:
    """The original whole-state derive, kept verbatim as the oracle."""
    probes: dict[str, list[EventLine]] = {}
    chats: dict[str, list[str]] = {}
    unattributed = 0
    for event in state.events.values():
        if event.kind not in PROBE_KINDS:
            continue
        if event.node_id is None or event.node_id not in state.nodes:
            unattributed += 1
            continue
        probes.setdefault(event.node_id, []).append(event)
    for chat_id, node_id in state.mappings:
        chats.setdefault(node_id, []).append(chat_id)
    rested = {
        node_id
        for node_id, mapped in chats.items()
        if all(state.mappings[c, node_id].prerequisite for c in mapped)
    }
    nodes: list[GraphNode] = []
    by_state: dict[str, int] = {}
    for node_id, line in state.nodes.items():
        seen = sorted(probes.get(node_id, []), key=lambda e: (e.at, e.ref))
        derived = node_state(line.kind, seen, seen=node_id not in rested)
        by_state[derived] = by_state.get(derived, 0) + 1
        sessions = list(dict.fromkeys([line.chat_id, *chats.get(node_id, [])]))
        nodes.append(
            GraphNode(
                id=node_id,
                statement=line.statement,
                kind=line.kind,
                state=derived,
                correct=sum(1 for e in seen if e.correct),
                incorrect=sum(1 for e in seen if e.correct is False),
                last_probe_at=seen[-1].at if seen else None,
                sessions=sessions,
                evidence=list(line.evidence),
                probes=[
                    Probe(
                        at=e.at,
                        chat_id=e.chat_id,
                        question=e.question,
                        answer=e.answer,
                        expected=e.expected,
                        correct=e.correct,
                        confidence=e.confidence,
                    )
                    for e in seen
                ],
            )
        )
    edges = [
        GraphEdge(from_=a, to=b, type=t, chats=list(c))
        for (a, b, t), c in state.edges.items()
        if a in state.nodes and b in state.nodes
    ]
    per_chat: dict[str, int] = {}
    for chat_id, _ in state.mappings:
        per_chat[chat_id] = per_chat.get(chat_id, 0) + 1
    sessions = [
        GraphSession(
            chat_id=c.chat_id, folded_at=c.folded_at, at=c.at, nodes=per_chat.get(c.chat_id, 0)
        )
        for c in state.checkpoints.values()
    ]
    stats = GraphStats(
        nodes=len(nodes),
        edges=len(edges),
        events=len(state.events),
        sessions=len(sessions),
        by_state=by_state,
        unattributed_probes=unattributed,
    )
    return GraphSnapshot(nodes=nodes, edges=edges, sessions=sessions, stats=stats)


def same(a: GraphSnapshot, b: GraphSnapshot) -> bool:
    """Equal content and equal bytes on the wire (dict key order included)."""
    return a == b and msgspec.json.encode(a) == msgspec.json.encode(b)


# --- random ledger lines (small pools, so duplicates, ties and dangling ids happen) ------

times = st.integers(0, 5).map(lambda m: T0 + timedelta(minutes=m))
node_ids = st.sampled_from(NODES)
chat_ids = st.sampled_from(CHATS)
EVIDENCE = Evidence(quote="q", message_id="m1", turn=1, speaker="learner", start=0, end=1)

propositions = st.builds(
    lambda i, kind, chat, at, ev: PropositionLine(
        id=i,
        statement=f"statement {i}",
        kind=kind,
        chat_id=chat,
        created_at=at,
        evidence=[EVIDENCE] if ev else [],
    ),
    node_ids,
    st.sampled_from(["proposition", "proposition", "misconception"]),
    chat_ids,
    times,
    st.booleans(),
)
edges = st.builds(
    lambda a, b, kind, chat, at: EdgeLine(
        id=f"e-{a}-{b}", from_=a, to=b, type=kind, chat_id=chat, created_at=at
    ),
    node_ids,
    node_ids,
    st.sampled_from(["requires", "supports"]),
    chat_ids,
    times,
)


@st.composite
def events(draw: Any) -> EventLine:
    kind = draw(st.sampled_from(["quiz_correct", "quiz_incorrect"] * 3 + ["marked_done", "taught"]))
    probe = kind.startswith("quiz")
    return EventLine(
        id=f"ev{draw(st.integers(0, 99))}",
        ref=f"r{draw(st.integers(0, 29))}",
        chat_id=draw(chat_ids),
        node_id=draw(st.sampled_from([None, *NODES, *NODES])),
        kind=kind,
        at=draw(times),
        question=f"q{draw(st.integers(0, 3))}",
        answer="a",
        expected="x",
        correct=(kind == "quiz_correct") if probe else None,
        confidence=draw(st.none() | st.sampled_from([0.5, 0.9])) if probe else None,
    )


mappings = st.builds(
    lambda chat, node, at, prerequisite: MappingLine(
        chat_id=chat,
        local_id=f"plan:{node}",
        node_id=node,
        how="created",
        at=at,
        prerequisite=prerequisite,
    ),
    chat_ids,
    node_ids,
    times,
    st.booleans(),
)
checkpoints = st.builds(
    lambda chat, n, at: SessionCheckpoint(chat_id=chat, folded_at=n, run_id="run-1", at=at),
    chat_ids,
    st.integers(0, 9),
    times,
)
batches = st.builds(
    LedgerBatch,
    propositions=st.lists(propositions, max_size=2),
    edges=st.lists(edges, max_size=3),
    events=st.lists(events(), max_size=6),
    mappings=st.lists(mappings, max_size=2),
    sessions=st.lists(checkpoints, max_size=2),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(batches, st.booleans()), max_size=8))
def test_incremental_snapshot_equals_a_derive_from_scratch(steps: list) -> None:
    state, deriver = GraphState(), SnapshotDeriver()
    for batch, look in steps:
        deriver.apply(state, fold_into(state, batch))
        if look:  # snapshots taken (or not) in between must not change the outcome
            assert same(deriver.snapshot(state), reference_snapshot(state))
    assert same(deriver.snapshot(state), reference_snapshot(state))
    assert same(derive_snapshot(state), reference_snapshot(state))


@settings(max_examples=60, deadline=None)
@given(st.lists(batches, max_size=5))
def test_fold_into_in_steps_equals_fold_of_everything_at_once(steps: list) -> None:
    stepwise = GraphState()
    for batch in steps:
        fold_into(stepwise, batch)
    everything = LedgerBatch()
    for batch in steps:
        for name in ("propositions", "edges", "events", "mappings", "sessions", "audit"):
            getattr(everything, name).extend(getattr(batch, name))
    assert stepwise == fold(GraphState(), everything)


def test_fold_leaves_its_input_alone_and_fold_into_reports_only_winners() -> None:
    line = PropositionLine(id="n1", statement="s", chat_id="c0", created_at=T0)
    event = EventLine(id="e1", ref="r1", chat_id="c0", node_id="n1", kind="taught", at=T0)
    first = LedgerBatch(propositions=[line], events=[event])
    base = fold(GraphState(), first)
    before = base.copy()
    grown = fold(base, LedgerBatch(events=[msgspec.structs.replace(event, ref="r2")]))
    assert base == before and len(grown.events) == 2
    delta = fold_into(base, LedgerBatch(propositions=[line], events=[event, event]))
    assert (delta.nodes, delta.events, delta.edges, delta.mappings) == ([], [], [], [])
    assert base == before  # duplicates change nothing


def test_an_overlay_reads_through_and_keeps_its_additions_to_itself() -> None:
    base = fold(
        GraphState(),
        LedgerBatch(
            propositions=[PropositionLine(id="n1", statement="s", chat_id="c0", created_at=T0)]
        ),
    )
    before = base.copy()
    layer = base.overlay()
    fold_into(
        layer,
        LedgerBatch(
            propositions=[PropositionLine(id="n2", statement="t", chat_id="c0", created_at=T0)]
        ),
    )
    assert "n1" in layer.nodes and "n2" in layer.nodes and layer.rank["n2"] == 1
    assert base == before and "n2" not in base.nodes


def test_unchanged_parts_are_shared_and_an_unchanged_graph_is_the_same_snapshot() -> None:
    state, deriver = GraphState(), SnapshotDeriver()
    lines = LedgerBatch(
        propositions=[
            PropositionLine(id=n, statement=n, chat_id="c0", created_at=T0) for n in ("n1", "n2")
        ],
        edges=[EdgeLine(id="e", from_="n1", to="n2", type="requires", chat_id="c0", created_at=T0)],
    )
    deriver.apply(state, fold_into(state, lines))
    first = deriver.snapshot(state)
    assert deriver.snapshot(state) is first
    probe = EventLine(
        id="e1", ref="r1", chat_id="c0", node_id="n2", kind="quiz_correct", at=T0, correct=True
    )
    deriver.apply(state, fold_into(state, LedgerBatch(events=[probe])))
    second = deriver.snapshot(state)
    assert second.edges is first.edges  # no edge changed
    assert second.nodes[0] is first.nodes[0]  # n1 untouched, n2 re-derived
    assert (first.nodes[1].state, second.nodes[1].state) == ("introduced", "verified")
    assert first.nodes[1].probes == []  # a snapshot handed out never changes


def test_a_layer_reads_through_counts_both_and_refuses_deletes() -> None:
    base = {"a": 1, "b": 2}
    layer: Layer[str, int] = Layer(base)
    layer["c"] = 3
    layer["a"] = 9
    assert (layer["a"], layer["b"], layer.get("c"), layer.get("z", 0)) == (9, 2, 3, 0)
    assert "b" in layer and "z" not in layer and layer.setdefault("b", 7) == 2
    assert (sorted(layer), len(layer), base) == (["a", "b", "c"], 3, {"a": 1, "b": 2})
    with pytest.raises(TypeError):
        del layer["a"]


def test_a_node_only_rested_on_is_unseen_until_a_chat_shows_it() -> None:
    def mapping(chat: str, node: str, *, prerequisite: bool) -> MappingLine:
        return MappingLine(
            chat_id=chat,
            local_id=f"{chat}:{node}:{prerequisite}",
            node_id=node,
            how="created",
            at=T0,
            prerequisite=prerequisite,
        )

    def states() -> dict[str, str]:
        return {n.id: n.state for n in deriver.snapshot(state).nodes}

    state, deriver = GraphState(), SnapshotDeriver()
    lines = LedgerBatch(
        propositions=[
            PropositionLine(id=n, statement=n, chat_id="c0", created_at=T0) for n in ("n1", "n2")
        ],
        mappings=[mapping("c0", "n1", prerequisite=True), mapping("c0", "n2", prerequisite=True)],
    )
    deriver.apply(state, fold_into(state, lines))
    assert states() == {"n1": "unseen", "n2": "unseen"}
    assert deriver.snapshot(state).stats.by_state == {"unseen": 2}

    # Another chat resting on it changes nothing; the same chat showing it supersedes.
    delta = fold_into(state, LedgerBatch(mappings=[mapping("c1", "n1", prerequisite=True)]))
    deriver.apply(state, delta)
    assert states()["n1"] == "unseen"
    delta = fold_into(state, LedgerBatch(mappings=[mapping("c0", "n1", prerequisite=False)]))
    assert delta.mappings == [("c0", "n1")]
    deriver.apply(state, delta)
    assert states()["n1"] == "introduced"
    (n1, _) = deriver.snapshot(state).nodes
    assert n1.sessions == ["c0", "c1"]  # superseding is not a second session
    checkpoint = SessionCheckpoint(chat_id="c0", folded_at=4, run_id="run-1", at=T0)
    deriver.apply(state, fold_into(state, LedgerBatch(sessions=[checkpoint])))
    assert [(s.chat_id, s.nodes) for s in deriver.snapshot(state).sessions] == [("c0", 2)]

    # Shown is final: a later prerequisite line of the same chat folds away.
    delta = fold_into(state, LedgerBatch(mappings=[mapping("c0", "n1", prerequisite=True)]))
    assert delta.mappings == [] and not state.mappings["c0", "n1"].prerequisite

    # A probe is evidence enough: an unseen node that was checked has a real state.
    probe = EventLine(
        id="e1", ref="r1", chat_id="c2", node_id="n2", kind="quiz_correct", at=T0, correct=True
    )
    deriver.apply(state, fold_into(state, LedgerBatch(events=[probe])))
    assert states() == {"n1": "introduced", "n2": "verified"}
    assert same(deriver.snapshot(state), reference_snapshot(state))
