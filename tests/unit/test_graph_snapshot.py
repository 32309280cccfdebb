"""The incremental read model: `SnapshotDeriver` fed fold deltas equals a from-scratch
derive (a reference written from the rules, with the `fsrs` package's own `Scheduler` for
memory) byte for byte, as of any moment, over random batch sequences with duplicates,
out-of-order times, ties and dangling ids."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import hypothesis.strategies as st
import msgspec
import pytest
from fsrs import Card
from hypothesis import given, settings

from backend.core.graph import (
    PROBE_KINDS,
    GraphState,
    SnapshotDeriver,
    derive_snapshot,
    fold,
    fold_into,
)
from backend.core.graph_state import Layer
from backend.core.memory import MemoryPolicy, rating
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
    Memory,
    Probe,
    PropositionLine,
    Resolution,
    SessionCheckpoint,
)

T0 = datetime(2025, 1, 1, tzinfo=UTC)
NODES = [f"n{i}" for i in range(4)]
CHATS = ["c0", "c1", "c2"]
POLICY = MemoryPolicy()
MOMENTS = [T0 + timedelta(days=d, minutes=m) for d in (0, 1, 3, 10, 40) for m in (0, 1)]
"""Line moments: ties, same-day reviews and reviews days apart."""


# --- the reference: the rules written out plainly, over the lines as of a moment ------------


def lines_as_of(lines: LedgerBatch, as_of: datetime | None) -> LedgerBatch:
    """The ledger lines that existed at `as_of`: those whose own moment is no later."""
    if as_of is None:
        return lines
    return LedgerBatch(
        propositions=[p for p in lines.propositions if p.created_at <= as_of],
        edges=[e for e in lines.edges if e.created_at <= as_of],
        events=[e for e in lines.events if e.at <= as_of],
        mappings=[m for m in lines.mappings if m.at <= as_of],
        sessions=[c for c in lines.sessions if c.at <= as_of],
    )


def reference_memory(probes: list[EventLine], as_of: datetime | None) -> Memory | None:
    if not probes:
        return None
    scheduler = POLICY.scheduler()
    card = Card(card_id=1, due=T0)
    for p in probes:
        card, _ = scheduler.review_card(card, rating(p.correct, p.confidence), p.at)
    assert card.stability is not None and card.difficulty is not None
    assert card.last_review is not None
    return Memory(
        stability=card.stability,
        difficulty=card.difficulty,
        retrievability=None if as_of is None else scheduler.get_card_retrievability(card, as_of),
        due=card.due,
        last_review=card.last_review,
        reviews=len(probes),
    )


def guessed(p: EventLine) -> bool:
    return p.confidence is not None and p.confidence < 0.4


def reference_resolution(
    line: PropositionLine, probes: list[EventLine], taught: list[EventLine]
) -> Resolution | None:
    def aided(p: EventLine) -> bool:
        return any(
            t.chat_id == p.chat_id
            and t.at <= p.at
            and (t.turn is msgspec.UNSET or p.turn is msgspec.UNSET or t.turn == p.turn)
            for t in taught
        )

    last_shown = (line.chat_id, line.created_at)
    by: EventLine | None = None
    for p in probes:
        if not p.correct:
            last_shown, by = (p.chat_id, p.at), None
        elif by is None and p.chat_id != last_shown[0] and p.at > last_shown[1]:
            by = None if guessed(p) or aided(p) else p
    if by is None:
        return None
    return Resolution(
        at=by.at,
        chat_id=by.chat_id,
        question=by.question,
        answer=by.answer,
        tool_call_id=by.tool_call_id,
    )


def reference_state(
    line: PropositionLine,
    probes: list[EventLine],
    rested: bool,
    memory: Memory | None,
    resolved: Resolution | None,
) -> str:
    if line.kind == "misconception":
        return "resolved" if resolved else "misconception"
    if not probes:
        return "unseen" if rested else "introduced"
    recent = probes[-2:]
    if not all(p.correct for p in recent):
        return "shaky"
    if all(guessed(p) for p in recent):
        return "introduced"
    recall = memory.retrievability if memory else None
    return "fading" if recall is not None and recall < POLICY.desired_retention else "verified"


def reference_snapshot(lines: LedgerBatch, as_of: datetime | None = None) -> GraphSnapshot:
    """The snapshot of `lines` as of `as_of`, derived from scratch."""
    state = fold(GraphState(), lines_as_of(lines, as_of))
    probes: dict[str, list[EventLine]] = {}
    taught: dict[str, list[EventLine]] = {}
    chats: dict[str, list[str]] = {}
    unattributed = 0
    for event in state.events.values():
        if event.kind == "taught" and event.node_id is not None:
            taught.setdefault(event.node_id, []).append(event)
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
        memory = reference_memory(seen, as_of)
        resolved = None
        if line.kind == "misconception" and as_of is not None:
            resolved = reference_resolution(line, seen, taught.get(node_id, []))
        derived = reference_state(line, seen, node_id in rested, memory, resolved)
        by_state[derived] = by_state.get(derived, 0) + 1
        sessions = list(dict.fromkeys([line.chat_id, *chats.get(node_id, [])]))
        nodes.append(
            GraphNode(
                id=node_id,
                statement=line.statement,
                kind=line.kind,
                state=derived,  # type: ignore[arg-type]
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
                memory=memory,
                resolution=resolved,
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
    return GraphSnapshot(nodes=nodes, edges=edges, sessions=sessions, stats=stats, as_of=as_of)


def same(a: GraphSnapshot, b: GraphSnapshot) -> bool:
    """Equal content and equal bytes on the wire (dict key order included)."""
    return a == b and msgspec.json.encode(a) == msgspec.json.encode(b)


# --- random ledger lines (small pools, so duplicates, ties and dangling ids happen) ------
#
# As in a real ledger: the lines a merge writes (nodes, edges, mappings, checkpoints) carry
# its clock, which never goes back from one batch to the next; an event carries the moment
# the learner answered, anything relative to the batch but fixed by its ref (a re-appended
# event is the same event); a chat never rests on a node after it showed it (the merger
# writes no such line). So "the lines up to a moment" is well defined.


@st.composite
def moment_table(draw: Any) -> dict[str, datetime]:
    """The moment of each event ref (each example draws its own)."""
    return {f"r{i}": draw(st.sampled_from(MOMENTS)) for i in range(30)}


EVIDENCE = Evidence(quote="q", message_id="m1", turn=1, speaker="learner", start=0, end=1)


def batches(moments: dict[str, datetime]) -> st.SearchStrategy[LedgerBatch]:
    node_ids, chat_ids = st.sampled_from(NODES), st.sampled_from(CHATS)
    propositions = st.builds(
        lambda i, kind, chat, ev: PropositionLine(
            id=i,
            statement=f"statement {i}",
            kind=kind,
            chat_id=chat,
            created_at=T0,
            evidence=[EVIDENCE] if ev else [],
        ),
        node_ids,
        st.sampled_from(["proposition", "proposition", "misconception"]),
        chat_ids,
        st.booleans(),
    )
    edges = st.builds(
        lambda a, b, kind, chat: EdgeLine(
            id=f"e-{a}-{b}",
            from_=a,
            to=b,
            type=kind,
            chat_id=chat,
            created_at=T0,
        ),
        node_ids,
        node_ids,
        st.sampled_from(["requires", "supports"]),
        chat_ids,
    )

    @st.composite
    def events(draw: Any) -> EventLine:
        kind = draw(
            st.sampled_from(["quiz_correct", "quiz_incorrect"] * 3 + ["marked_done", "taught"])
        )
        probe = kind.startswith("quiz")
        ref = f"r{draw(st.integers(0, 29))}"
        turn = draw(st.sampled_from([msgspec.UNSET, 1, 2]))
        return EventLine(
            id=f"ev{draw(st.integers(0, 99))}",
            ref=ref,
            chat_id=draw(chat_ids),
            node_id=draw(st.sampled_from([None, *NODES, *NODES])),
            kind=kind,
            at=moments[ref],
            question=f"q{draw(st.integers(0, 3))}",
            answer="a",
            expected="x",
            correct=(kind == "quiz_correct") if probe else None,
            confidence=draw(st.none() | st.sampled_from([0.25, 0.6, 0.9])) if probe else None,
            turn=turn,
        )

    mappings = st.builds(
        lambda chat, node, prerequisite: MappingLine(
            chat_id=chat,
            local_id=f"plan:{node}",
            node_id=node,
            how="created",
            at=T0,
            prerequisite=prerequisite,
        ),
        chat_ids,
        node_ids,
        st.booleans(),
    )
    checkpoints = st.builds(
        lambda chat, n: SessionCheckpoint(chat_id=chat, folded_at=n, run_id="run-1", at=T0),
        chat_ids,
        st.integers(0, 9),
    )
    return st.builds(
        LedgerBatch,
        propositions=st.lists(propositions, max_size=2),
        edges=st.lists(edges, max_size=3),
        events=st.lists(events(), max_size=6),
        mappings=st.lists(mappings, max_size=2),
        sessions=st.lists(checkpoints, max_size=2),
    )


def realistic(batch: LedgerBatch, clock: datetime, shown: set[tuple[str, str]]) -> LedgerBatch:
    """`batch` as a merge at `clock` writes it: its lines carry that moment, and the
    prerequisite mappings the merger would never write (the chat had shown the node
    already) are left out; `shown` accumulates across batches."""
    kept = []
    for m in batch.mappings:
        if m.prerequisite and (m.chat_id, m.node_id) in shown:
            continue
        if not m.prerequisite:
            shown.add((m.chat_id, m.node_id))
        kept.append(msgspec.structs.replace(m, at=clock))
    return LedgerBatch(
        propositions=[msgspec.structs.replace(p, created_at=clock) for p in batch.propositions],
        edges=[msgspec.structs.replace(e, created_at=clock) for e in batch.edges],
        events=batch.events,
        mappings=kept,
        sessions=[msgspec.structs.replace(c, at=clock) for c in batch.sessions],
    )


def extend(lines: LedgerBatch, batch: LedgerBatch) -> None:
    for name in ("propositions", "edges", "events", "mappings", "sessions", "audit"):
        getattr(lines, name).extend(getattr(batch, name))


as_ofs = st.none() | st.sampled_from(
    [*MOMENTS, T0 - timedelta(days=1), T0 + timedelta(days=3, hours=5), T0 + timedelta(days=90)]
)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_incremental_snapshot_equals_a_derive_from_scratch_as_of_any_moment(data: Any) -> None:
    moments = data.draw(moment_table())
    steps = data.draw(
        st.lists(
            st.tuples(batches(moments), st.sampled_from(MOMENTS), st.lists(as_ofs, max_size=3)),
            max_size=8,
        )
    )
    state, deriver, lines, shown = GraphState(), SnapshotDeriver(), LedgerBatch(), set()
    clock = T0
    for batch, merged_at, looks in steps:
        clock = max(clock, merged_at)
        batch = realistic(batch, clock, shown)
        extend(lines, batch)
        deriver.apply(state, fold_into(state, batch))
        for as_of in looks:  # snapshots taken (or not) in between must not change the outcome
            assert same(deriver.snapshot(state, as_of), reference_snapshot(lines, as_of))
    for as_of in (None, T0 + timedelta(days=90), *MOMENTS[::3]):
        assert same(deriver.snapshot(state, as_of), reference_snapshot(lines, as_of))
        assert same(derive_snapshot(state, as_of), reference_snapshot(lines, as_of))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_fold_into_in_steps_equals_fold_of_everything_at_once(data: Any) -> None:
    steps = data.draw(st.lists(batches(data.draw(moment_table())), max_size=5))
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
