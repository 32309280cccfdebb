"""The merger, fold and derived snapshot: identity, provenance, events from the transcript,
idempotence and incrementality (Hypothesis)."""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st
from hypothesis import given, settings
from msgspec.structs import replace

from backend.core.graph import (
    GraphState,
    derive_snapshot,
    fold,
    merge,
    merge_resolving,
    normalise_statement,
)
from backend.core.ports import LedgerBatch
from shared_contracts.chat import ChatRecord
from shared_contracts.extraction import Findings, FoundAttribution, FoundEdge, FoundProposition
from shared_contracts.graph import Evidence
from tests.fakes import FixedClock, SequentialIds
from tests.unit.test_graph_probes import lesson_record

EVIDENCE = [
    Evidence(
        quote="Q: What is 2/7 + 3/7?\nA: 5/7",
        message_id="m4",
        turn=3,
        speaker="answer",
        start=0,
        end=1,
    )
]


def found(
    local_id: str,
    statement: str,
    *,
    kind: str = "proposition",
    plan: str | None = None,
    aliases: list[str] | None = None,
) -> FoundProposition:
    return FoundProposition(
        local_id=local_id,
        statement=statement,
        kind=kind,  # type: ignore[arg-type]
        plan_node=plan,
        aliases=aliases or [],
        evidence=EVIDENCE,
    )


LESSON = Findings(
    propositions=[
        found("a", "What a fraction is: a/b is a of b equal parts", plan="n-frac"),
        found("b", "Same denominators: add the numerators and keep the denominator", plan="n-same"),
        found("w", "1/5 + 2/5 = 3/10", kind="misconception"),
        found(
            "h", "Halves and quarters add over a common denominator", aliases=["1/2 + 1/4 = 3/4"]
        ),
    ],
    edges=[
        FoundEdge(from_="a", to="b", type="requires"),
        FoundEdge(from_="b", to="h", type="supports"),
    ],
    attributions=[FoundAttribution(tool_call_id="call_q4", target="h")],
)


class Ledger:
    """Merges and folds like the pipeline does, keeping every batch."""

    def __init__(self) -> None:
        self.state = GraphState()
        self.clock = FixedClock()
        self.ids = SequentialIds()
        self.runs = 0
        self.resolved: dict[str, str] = {}
        self.batches: list[LedgerBatch] = []

    def merge(self, findings: Findings, record: ChatRecord) -> LedgerBatch:
        self.runs += 1
        batch, self.resolved = merge_resolving(
            self.state, findings, record, run_id=f"run-{self.runs}", clock=self.clock, ids=self.ids
        )
        self.batches.append(batch)
        self.state = fold(self.state, batch)
        return batch


def test_merge_creates_nodes_mappings_edges_and_events_rebuilt_from_the_transcript() -> None:
    ledger = Ledger()
    record = lesson_record()
    batch = ledger.merge(LESSON, record)
    assert [p.statement for p in batch.propositions] == [p.statement for p in LESSON.propositions]
    node = {p.local_id: n.id for p, n in zip(LESSON.propositions, batch.propositions, strict=True)}
    assert [(m.local_id, m.node_id, m.how) for m in batch.mappings] == [
        ("plan:n-frac", node["a"], "created"),
        ("plan:n-same", node["b"], "created"),
        ("run-1:w", node["w"], "created"),
        ("run-1:h", node["h"], "created"),
    ]
    assert [(e.from_, e.to, e.type) for e in batch.edges] == [
        (node["a"], node["b"], "requires"),
        (node["b"], node["h"], "supports"),
    ]
    events = {e.tool_call_id: e for e in batch.events}
    assert {k: (e.kind, e.node_id) for k, e in events.items()} == {
        "call_q1": ("quiz_correct", node["a"]),  # tagged n-frac → the mapping
        "call_q2": ("quiz_incorrect", node["b"]),
        "call_q3": ("quiz_correct", node["b"]),
        "call_q4": ("quiz_correct", node["h"]),  # untagged → the extractor's attribution
        "call_done1": ("marked_done", node["b"]),
    }
    q2 = events["call_q2"]
    assert (q2.ref, q2.question, q2.answer, q2.expected, q2.correct, q2.confidence) == (
        "c1:call_q2",
        "What is 1/5 + 2/5?",
        "3/10",
        "3/5",
        False,
        0.7,
    )
    assert q2.at == record.messages[2].created_at
    assert [(s.chat_id, s.folded_at, s.run_id) for s in batch.sessions] == [("c1", 6, "run-1")]


def test_merge_is_merge_resolving_without_the_resolution() -> None:
    plain = merge(
        GraphState(), LESSON, lesson_record(), run_id="r", clock=FixedClock(), ids=SequentialIds()
    )
    batch, resolved = merge_resolving(
        GraphState(), LESSON, lesson_record(), run_id="r", clock=FixedClock(), ids=SequentialIds()
    )
    assert plain == batch
    assert resolved == {
        p.local_id: n.id for p, n in zip(LESSON.propositions, batch.propositions, strict=True)
    }


def test_merge_leaves_the_state_it_reads_untouched() -> None:
    ledger = Ledger()
    ledger.merge(LESSON, lesson_record())
    before = ledger.state.copy()
    again = Findings(
        propositions=[*LESSON.propositions, found("n", "A brand new fact")], edges=LESSON.edges
    )
    batch = merge(
        ledger.state,
        again,
        lesson_record("c2"),
        run_id="r",
        clock=FixedClock(),
        ids=SequentialIds(),
    )
    assert batch.propositions and batch.mappings and batch.edges and batch.events
    assert ledger.state == before


def test_merging_the_same_findings_again_adds_nothing() -> None:
    ledger = Ledger()
    ledger.merge(LESSON, lesson_record())
    assert ledger.merge(LESSON, lesson_record()).is_empty()


def test_unattributable_probe_lands_without_a_node_but_with_its_question() -> None:
    ledger = Ledger()
    batch = ledger.merge(replace(LESSON, attributions=[]), lesson_record())
    q4 = next(e for e in batch.events if e.tool_call_id == "call_q4")
    assert (q4.node_id, q4.question) == (None, "What is 1/2 + 1/4?")
    assert derive_snapshot(ledger.state).stats.unattributed_probes == 1


def test_identity_by_normalised_statement_or_alias_but_never_across_kinds() -> None:
    ledger = Ledger()
    ledger.merge(LESSON, lesson_record())
    again = Findings(
        propositions=[
            found("x", "  what a FRACTION is:  a/b is a of b equal parts. "),
            found("y", "1/2 + 1/4 = 3/4"),  # an alias of h
            found("z", "1/5 + 2/5 = 3/10", kind="proposition"),  # same words, other kind
            found("v", "1/5 + 2/5 = 3/10", kind="misconception"),
        ]
    )
    batch = ledger.merge(again, lesson_record("c2"))
    assert [p.statement for p in batch.propositions] == ["1/5 + 2/5 = 3/10"]
    assert batch.propositions[0].kind == "proposition"
    assert sorted(m.how for m in batch.mappings) == ["alias", "created", "statement", "statement"]
    snapshot = derive_snapshot(ledger.state)
    assert snapshot.stats.nodes == 5
    assert {n.kind for n in snapshot.nodes if n.statement == "1/5 + 2/5 = 3/10"} == {
        "proposition",
        "misconception",
    }


def test_edges_dedupe_by_endpoints_and_type_with_per_chat_provenance() -> None:
    ledger = Ledger()
    ledger.merge(LESSON, lesson_record())
    second = Ledger()
    second.state, second.ids, second.runs = ledger.state, ledger.ids, 1
    batch = second.merge(LESSON, lesson_record("c2"))
    assert len(batch.edges) == 2 and {e.chat_id for e in batch.edges} == {"c2"}
    assert batch.propositions == []
    assert second.merge(LESSON, lesson_record("c2")).is_empty()
    edges = derive_snapshot(second.state).edges
    assert [e.chats for e in edges] == [["c1", "c2"], ["c1", "c2"]]


def test_derived_states_follow_the_latest_probes() -> None:
    ledger = Ledger()
    ledger.merge(LESSON, lesson_record())
    nodes = {n.statement: n for n in derive_snapshot(ledger.state).nodes}
    frac = nodes["What a fraction is: a/b is a of b equal parts"]
    same = nodes["Same denominators: add the numerators and keep the denominator"]
    assert (frac.state, frac.correct, frac.incorrect) == ("verified", 1, 0)
    assert (same.state, same.correct, same.incorrect) == ("shaky", 1, 1)  # wrong then right
    assert nodes["1/5 + 2/5 = 3/10"].state == "misconception"
    assert [p.question for p in same.probes] == ["What is 1/5 + 2/5?", "What is 2/7 + 3/7?"]
    assert same.last_probe_at == lesson_record().messages[4].created_at
    assert same.sessions == ["c1"]


def test_state_without_probes_is_introduced_and_two_right_answers_verify() -> None:
    from backend.core.graph import node_state
    from shared_contracts.graph import EventLine

    def probe(ok: bool) -> EventLine:
        return EventLine(
            id="e",
            ref="r",
            chat_id="c",
            kind="quiz_correct" if ok else "quiz_incorrect",
            at=lesson_record().created_at,
            correct=ok,
        )

    assert node_state("proposition", []) == "introduced"
    assert node_state("proposition", [probe(False), probe(True), probe(True)]) == "verified"
    assert node_state("proposition", [probe(True), probe(False)]) == "shaky"
    assert node_state("misconception", [probe(True)]) == "misconception"


def test_fold_ignores_duplicate_lines_and_keeps_the_last_checkpoint() -> None:
    ledger = Ledger()
    batch = ledger.merge(LESSON, lesson_record())
    doubled = fold(fold(GraphState(), batch), batch)
    assert derive_snapshot(doubled) == derive_snapshot(ledger.state)


# --- properties -------------------------------------------------------------------------

STATEMENTS = [
    "Fractions add over a common denominator",
    "fractions add over a COMMON  denominator.",
    "A fraction is part of a whole",
    "The denominator counts equal parts",
    "1/5 + 2/5 = 3/10",
]
PLAN_NODES = ["n-frac", "n-same", "n-diff", None]
QUIZZES = {"call_q1": 1, "call_q2": 2, "call_q3": 4, "call_q4": 5}  # call → message index
TAGS_AT = {"n-frac": [1], "n-same": [2, 4, 5], "n-diff": []}  # plan node → probe messages


@st.composite
def split_findings(draw: Any) -> tuple[Findings, Findings, int]:
    """Findings F split at message k into what a run over messages[:k] would see (F1)
    and what a later run sees (F2), with F2 pointing at F1 items by local id."""
    props = [
        found(
            f"p{i}",
            draw(st.sampled_from(STATEMENTS)),
            kind=draw(st.sampled_from(["proposition", "misconception"])),
            plan=draw(st.sampled_from(PLAN_NODES)),
            aliases=draw(st.lists(st.sampled_from(STATEMENTS), max_size=2)),
        )
        for i in range(draw(st.integers(0, 6)))
    ]
    k = draw(st.integers(0, 6))
    first = {p.local_id: draw(st.booleans()) for p in props}
    for p in props:  # a probe in the first window needs its plan node's proposition then
        if p.plan_node and any(i < k for i in TAGS_AT[p.plan_node]):
            first[p.local_id] = True
    locals_ = [p.local_id for p in props]
    attributions = []
    if locals_:
        for call, index in QUIZZES.items():
            if draw(st.booleans()):
                target = draw(st.sampled_from(locals_))
                if index < k:
                    first[target] = True
                attributions.append((FoundAttribution(tool_call_id=call, target=target), index < k))
    edges = []
    if locals_:
        for _ in range(draw(st.integers(0, 4))):
            a, b = draw(st.sampled_from(locals_)), draw(st.sampled_from(locals_))
            edge = FoundEdge(from_=a, to=b, type=draw(st.sampled_from(["requires", "supports"])))
            edges.append((edge, first[a] and first[b]))
    f1 = Findings(
        propositions=[p for p in props if first[p.local_id]],
        edges=[e for e, one in edges if one],
        attributions=[a for a, one in attributions if one],
    )
    f2 = Findings(
        propositions=[p for p in props if not first[p.local_id]],
        edges=[e for e, one in edges if not one],
        attributions=[a for a, one in attributions if not one],
    )
    return f1, f2, k


def canonical(state: GraphState) -> dict[str, Any]:
    """The graph with ids replaced by what they name (ids depend on the order of calls)."""
    name = {i: (n.kind, normalise_statement(n.statement)) for i, n in state.nodes.items()}
    return {
        "nodes": sorted(name.values()),
        "edges": sorted((name[a], name[b], t, chats) for (a, b, t), chats in state.edges.items()),
        "events": sorted(
            (ref, e.kind, name.get(e.node_id) if e.node_id else None, e.question, e.answer)
            for ref, e in state.events.items()
        ),
        "mappings": sorted((c, name[n], m.how) for (c, n), m in state.mappings.items()),
        "folded_at": {c: s.folded_at for c, s in state.checkpoints.items()},
    }


@settings(max_examples=80, deadline=None)
@given(split_findings())
def test_merging_in_two_steps_equals_merging_at_once(case: tuple[Findings, Findings, int]) -> None:
    f1, f2, k = case
    record = lesson_record()
    prefix = replace(record, messages=record.messages[:k])
    at_once = Ledger()
    both = Findings(
        propositions=[*f1.propositions, *f2.propositions],
        edges=[*f1.edges, *f2.edges],
        attributions=[*f1.attributions, *f2.attributions],
    )
    at_once.merge(both, record)
    stepwise = Ledger()
    stepwise.merge(f1, prefix)
    stepwise.merge(rewrite(f2, stepwise.resolved), record)
    assert canonical(stepwise.state) == canonical(at_once.state)


def rewrite(findings: Findings, resolved: dict[str, str]) -> Findings:
    def ref(x: str) -> str:
        return resolved.get(x, x)

    return replace(
        findings,
        edges=[replace(e, from_=ref(e.from_), to=ref(e.to)) for e in findings.edges],
        attributions=[replace(a, target=ref(a.target)) for a in findings.attributions],
    )


@settings(max_examples=60, deadline=None)
@given(split_findings())
def test_merging_twice_equals_merging_once(case: tuple[Findings, Findings, int]) -> None:
    f1, f2, _ = case
    both = Findings(
        propositions=[*f1.propositions, *f2.propositions],
        edges=[*f1.edges, *f2.edges],
        attributions=[*f1.attributions, *f2.attributions],
    )
    ledger = Ledger()
    ledger.merge(both, lesson_record())
    before = canonical(ledger.state)
    assert ledger.merge(both, lesson_record()).is_empty()
    assert canonical(ledger.state) == before
    ids = [line.id for b in ledger.batches for line in [*b.propositions, *b.edges, *b.events]]
    assert len(ids) == len(set(ids))


def test_a_prerequisite_is_unseen_until_the_chat_shows_it_and_showing_it_maps_it_again() -> None:
    record = lesson_record()
    ledger = Ledger()
    rests = replace(found("p", "Multiplying whole numbers"), prerequisite=True)
    first = ledger.merge(Findings(propositions=[rests]), record)
    assert [(m.how, m.prerequisite) for m in first.mappings] == [("created", True)]
    assert [n.state for n in derive_snapshot(ledger.state).nodes] == ["unseen"]
    assert ledger.merge(Findings(propositions=[rests]), record).is_empty()

    shown = found("q", "multiplying whole numbers.")
    second = ledger.merge(Findings(propositions=[shown]), record)
    assert [(m.node_id, m.how, m.prerequisite) for m in second.mappings] == [
        (first.mappings[0].node_id, "statement", False)
    ]
    assert second.propositions == []
    assert [n.state for n in derive_snapshot(ledger.state).nodes] == ["introduced"]
    assert ledger.merge(Findings(propositions=[shown, rests]), record).is_empty()


def test_a_finding_both_shown_and_rested_on_in_one_run_maps_as_shown() -> None:
    rests = replace(found("p", "Adding whole numbers"), prerequisite=True)
    batch = Ledger().merge(
        Findings(propositions=[rests, found("q", "Adding whole numbers")]), lesson_record()
    )
    assert [(m.local_id, m.prerequisite) for m in batch.mappings] == [("run-1:q", False)]
