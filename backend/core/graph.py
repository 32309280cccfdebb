"""The knowledge graph, pure: the merger, plus the fold and derive it builds on.

Fold lives in `graph_state` (`fold`, `fold_into`), the read model in `graph_snapshot`
(`derive_snapshot`, `SnapshotDeriver`); both are re-exported here, the graph's one door.

Merge (the merger) is conservative: identity only by normalised statement or alias within
the same kind (a misconception never merges with a proposition) — a duplicate over a wrong
merge. Events are rebuilt from the transcript's tool parts, never from the model. It costs
O(session), not O(graph): it folds its own lines into an overlay of the state.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from backend.core.graph_probes import done_marks, quiz_probes
from backend.core.graph_snapshot import (
    PROBE_KINDS,
    RECENT_PROBES,
    SnapshotDeriver,
    derive_snapshot,
    node_state,
)
from backend.core.graph_state import (
    EdgeKey,
    FoldDelta,
    GraphState,
    add_edge,
    add_event,
    add_mapping,
    add_node,
    fold,
    fold_into,
    normalise_statement,
    supersedes,
)
from backend.core.pending import foldable_upto
from backend.core.ports import Clock, IdGen, LedgerBatch
from shared_contracts.chat import ChatRecord
from shared_contracts.extraction import Findings
from shared_contracts.graph import (
    AuditLine,
    EdgeLine,
    EventLine,
    MappingHow,
    MappingLine,
    PropositionLine,
    SessionCheckpoint,
)

__all__ = [
    "PROBE_KINDS",
    "RECENT_PROBES",
    "EdgeKey",
    "FoldDelta",
    "GraphState",
    "SnapshotDeriver",
    "derive_snapshot",
    "fold",
    "fold_into",
    "merge",
    "merge_resolving",
    "node_state",
    "normalise_statement",
    "with_audit",
]


def _mapping_local_id(local_id: str, plan_node: str | None, run_id: str) -> str:
    # Plan node ids are stable within a chat (tagged probes resolve through them);
    # the extractor's own local ids only mean something within one run.
    return f"plan:{plan_node}" if plan_node else f"{run_id}:{local_id}"


def merge(
    state: GraphState,
    findings: Findings,
    record: ChatRecord,
    *,
    run_id: str,
    clock: Clock,
    ids: IdGen,
) -> LedgerBatch:
    """The lines that fold `findings` and the record's probes into `state` (pure but for
    `clock`/`ids`). Idempotent: merging what is already folded yields an empty batch."""
    return merge_resolving(state, findings, record, run_id=run_id, clock=clock, ids=ids)[0]


def merge_resolving(
    state: GraphState,
    findings: Findings,
    record: ChatRecord,
    *,
    run_id: str,
    clock: Clock,
    ids: IdGen,
) -> tuple[LedgerBatch, dict[str, str]]:
    """`merge`, plus which node each of the findings' local ids became or matched."""
    chat_id = record.id
    now = clock.now()
    batch = LedgerBatch()
    # The batch folded in as it grows, so later items see earlier ones; an overlay, so
    # `state` stays untouched and the cost stays with the session, not the graph.
    work = state.overlay()
    resolved: dict[str, str] = {}

    # What the learner showed first: a chat that both rested on and showed a node maps it as
    # shown, and a prerequisite never takes a plan node's mapping key from a learned item.
    for prop in sorted(findings.propositions, key=lambda p: p.prerequisite):
        keys = [
            (prop.kind, k) for k in map(normalise_statement, [prop.statement, *prop.aliases]) if k
        ]
        # Of every node matching one of its keys, a finding takes the OLDEST: nodes created
        # later are younger, so a re-run or a later batch never changes a resolution.
        node_id: str | None = None
        how: MappingHow = "created"
        candidates = {work.identity[key] for key in keys if key in work.identity}
        if candidates:
            node_id = min(candidates, key=work.rank.__getitem__)
            same = normalise_statement(work.nodes[node_id].statement) == keys[0][1]
            how = "statement" if same else "alias"
        if node_id is None:
            node_id = ids.new("node")
            aliases = [a for a in dict.fromkeys(prop.aliases) if a != prop.statement]
            line = PropositionLine(
                id=node_id,
                statement=prop.statement,
                kind=prop.kind,
                aliases=aliases,
                chat_id=chat_id,
                created_at=now,
                evidence=list(prop.evidence),
            )
            batch.propositions.append(line)
            add_node(work, line)
        resolved[prop.local_id] = node_id
        local_id = _mapping_local_id(prop.local_id, prop.plan_node, run_id)
        mapping = MappingLine(
            chat_id=chat_id,
            local_id=local_id,
            node_id=node_id,
            how=how,
            at=now,
            prerequisite=prop.prerequisite,
        )
        if supersedes(mapping, work.mappings.get((chat_id, node_id))):
            batch.mappings.append(mapping)
            add_mapping(work, mapping)

    def endpoint(ref: str) -> str | None:
        return resolved.get(ref) or (ref if ref in work.nodes else None)

    for edge in findings.edges:
        a, b = endpoint(edge.from_), endpoint(edge.to)
        if a is None or b is None or a == b or chat_id in work.edges.get((a, b, edge.type), ()):
            continue
        edge_line = EdgeLine(
            id=ids.new("edge"),
            from_=a,
            to=b,
            type=edge.type,
            chat_id=chat_id,
            created_at=now,
            evidence=list(edge.evidence),
        )
        batch.edges.append(edge_line)
        add_edge(work, edge_line)

    upto = foldable_upto(record)
    attributed = {a.tool_call_id: endpoint(a.target) for a in findings.attributions}

    def tagged(tag: str | None) -> str | None:
        return work.local.get((chat_id, f"plan:{tag}")) if tag else None

    for quiz in quiz_probes(record, 0, upto):
        ref = f"{chat_id}:{quiz.tool_call_id}"
        if ref in work.events:
            continue
        # A tag that resolves wins; the extractor's judgment only fills the gaps.
        node = tagged(quiz.node_tag) or attributed.get(quiz.tool_call_id)
        event = EventLine(
            id=ids.new("event"),
            ref=ref,
            chat_id=chat_id,
            node_id=node,
            kind="quiz_correct" if quiz.correct else "quiz_incorrect",
            at=quiz.at,
            tool_call_id=quiz.tool_call_id,
            question=quiz.question,
            answer=quiz.answer,
            expected=quiz.expected,
            correct=quiz.correct,
            confidence=quiz.confidence,
        )
        batch.events.append(event)
        add_event(work, event)
    for mark in done_marks(record, 0, upto):
        ref = f"{chat_id}:{mark.tool_call_id}"
        if ref in work.events:
            continue
        event = EventLine(
            id=ids.new("event"),
            ref=ref,
            chat_id=chat_id,
            node_id=tagged(mark.node_tag),
            kind="marked_done",
            at=mark.at,
            tool_call_id=mark.tool_call_id,
            question=mark.note,
        )
        batch.events.append(event)
        add_event(work, event)

    if not batch.is_empty() or state.folded_at(chat_id) != upto:
        batch.sessions.append(
            SessionCheckpoint(chat_id=chat_id, folded_at=upto, run_id=run_id, at=now)
        )
    return batch, resolved


def with_audit(batch: LedgerBatch, audit: Iterable[AuditLine]) -> LedgerBatch:
    """`batch` with audit lines added (the pipeline's gate and auditor drops)."""
    return replace(batch, audit=[*batch.audit, *audit])
