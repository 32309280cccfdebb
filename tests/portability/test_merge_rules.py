"""The ledger half of a merge, line by line (pure: `core.portability.merge`)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backend.core.errors import ImportConflict
from backend.core.graph import GraphState, derive_snapshot, fold
from backend.core.portability.merge import merge_ledgers
from backend.core.ports import LedgerBatch
from shared_contracts.graph import (
    AuditLine,
    EdgeLine,
    EventLine,
    MappingLine,
    NodeKind,
    PropositionLine,
    SessionCheckpoint,
)

AT = datetime(2026, 3, 1, tzinfo=UTC)


def node(id_: str, statement: str, *, kind: NodeKind = "proposition", aliases=(), chat="c1"):
    return PropositionLine(
        id=id_, statement=statement, kind=kind, aliases=list(aliases), chat_id=chat, created_at=AT
    )


def edge(id_: str, a: str, b: str, chat: str = "c1") -> EdgeLine:
    return EdgeLine(id=id_, from_=a, to=b, type="requires", chat_id=chat, created_at=AT)


def event(id_: str, ref: str, node_id: str | None, chat: str = "c1") -> EventLine:
    return EventLine(
        id=id_, ref=ref, chat_id=chat, node_id=node_id, kind="quiz_correct", at=AT, correct=True
    )


def mapping(chat: str, local: str, node_id: str, *, prerequisite: bool = False) -> MappingLine:
    return MappingLine(
        chat_id=chat,
        local_id=local,
        node_id=node_id,
        how="created",
        at=AT,
        prerequisite=prerequisite,
    )


def checkpoint(chat: str, folded_at: int, run: str = "run-1") -> SessionCheckpoint:
    return SessionCheckpoint(chat_id=chat, folded_at=folded_at, run_id=run, at=AT)


LOCAL = LedgerBatch(
    propositions=[node("n-halves", "Halves are equal parts", aliases=["A half is one of two"])],
    mappings=[mapping("c1", "plan:p1", "n-halves")],
    sessions=[checkpoint("c1", 4)],
)


def test_a_node_named_by_a_statement_or_alias_already_here_becomes_that_node():
    incoming = LedgerBatch(
        propositions=[
            node("n-other", "a half is ONE of two.", chat="c2"),  # the local alias, normalised
            node("n-quarter", "Quarters are four equal parts", chat="c2"),
        ],
        edges=[edge("e-1", "n-quarter", "n-other", chat="c2")],
        events=[event("ev-1", "c2:call-1", "n-other", chat="c2")],
        mappings=[mapping("c2", "plan:p1", "n-other"), mapping("c2", "plan:p2", "n-quarter")],
        sessions=[checkpoint("c2", 6)],
    )
    out = merge_ledgers(LOCAL, incoming)
    assert [p.id for p in out.propositions] == ["n-quarter"]
    assert [(e.from_, e.to) for e in out.edges] == [("n-quarter", "n-halves")]
    assert [e.node_id for e in out.events] == ["n-halves"]
    assert [(m.chat_id, m.node_id) for m in out.mappings] == [
        ("c2", "n-halves"),
        ("c2", "n-quarter"),
    ]
    assert out.sessions == [checkpoint("c2", 6)]
    merged = derive_snapshot(fold(fold(GraphState(), LOCAL), out))
    halves = next(n for n in merged.nodes if n.id == "n-halves")
    assert halves.sessions == ["c1", "c2"] and halves.correct == 1
    # idempotent: merging again into the merged ledgers appends nothing
    both = LedgerBatch(**{k: getattr(LOCAL, k) + getattr(out, k) for k in LedgerBatch.__slots__})
    assert merge_ledgers(both, incoming).is_empty()


def test_a_misconception_never_becomes_a_proposition_with_the_same_words():
    incoming = LedgerBatch(
        propositions=[node("n-wrong", "Halves are equal parts", kind="misconception", chat="c2")]
    )
    assert [p.id for p in merge_ledgers(LOCAL, incoming).propositions] == ["n-wrong"]


def test_an_edge_between_two_nodes_that_became_one_is_dropped():
    incoming = LedgerBatch(
        propositions=[node("n-a", "Halves are equal parts", chat="c2")],
        edges=[edge("e-loop", "n-a", "n-halves", chat="c2")],
    )
    assert merge_ledgers(LOCAL, incoming).edges == []


def test_a_shown_mapping_supersedes_a_prerequisite_one_and_not_the_reverse():
    local = LedgerBatch(
        propositions=LOCAL.propositions,
        mappings=[mapping("c1", "rests-1", "n-halves", prerequisite=True)],
    )
    shown = mapping("c1", "plan:p1", "n-halves")
    assert merge_ledgers(local, LedgerBatch(mappings=[shown])).mappings == [shown]
    again = mapping("c1", "rests-2", "n-halves", prerequisite=True)
    assert merge_ledgers(LOCAL, LedgerBatch(mappings=[again])).mappings == []


def test_a_checkpoint_is_appended_only_when_it_is_further_along():
    assert merge_ledgers(LOCAL, LedgerBatch(sessions=[checkpoint("c1", 3)])).sessions == []
    assert merge_ledgers(LOCAL, LedgerBatch(sessions=[checkpoint("c1", 4, "run-9")])).sessions == []
    ahead = checkpoint("c1", 8)
    assert merge_ledgers(LOCAL, LedgerBatch(sessions=[checkpoint("c1", 2), ahead])).sessions == [
        ahead
    ]


def test_events_are_kept_once_per_ref_and_audit_lines_once_each():
    drop = AuditLine(
        run_id="run-1", chat_id="c1", stage="gate", item_kind="edge", item="a->b", reason="x", at=AT
    )
    local = LedgerBatch(events=[event("ev-1", "c1:call-1", "n-halves")], audit=[drop])
    incoming = LedgerBatch(
        events=[event("ev-other", "c1:call-1", "n-halves"), event("ev-2", "c1:call-2", None)],
        audit=[drop, drop],
    )
    out = merge_ledgers(local, incoming)
    assert [e.id for e in out.events] == ["ev-2"] and out.audit == []


@pytest.mark.parametrize(
    ("incoming", "message"),
    [
        (LedgerBatch(propositions=[node("n-halves", "Something else")]), "node 'n-halves'"),
        (
            LedgerBatch(edges=[edge("e-1", "x", "y"), edge("e-1", "y", "z")]),
            "graph/edges.jsonl: id 'e-1'",
        ),
        (
            LedgerBatch(events=[event("ev-1", "c1:a", None), event("ev-1", "c1:b", None)]),
            "graph/events.jsonl: id 'ev-1'",
        ),
    ],
)
def test_the_same_id_for_different_lines_is_a_conflict(incoming: LedgerBatch, message: str):
    with pytest.raises(ImportConflict, match=message):
        merge_ledgers(LOCAL, incoming)
