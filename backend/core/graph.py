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
from datetime import datetime
from typing import Any

import msgspec

from backend.core.graph_probes import GradedQuiz, done_marks, plan_marks, quiz_probes
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
from backend.core.prerequisites import skipped_checks
from shared_contracts.chat import ChatRecord
from shared_contracts.extraction import Findings, FoundEdge, FoundProposition
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
    merger = _Merger(state, record, run_id=run_id, now=clock.now(), ids=ids)
    # What the learner showed first: a chat that both rested on and showed a node maps it as
    # shown, and a prerequisite never takes a plan node's mapping key from a learned item.
    for prop in sorted(findings.propositions, key=lambda p: p.prerequisite):
        merger.proposition(prop)
    for edge in findings.edges:
        merger.edge(edge)
    attributed = {a.tool_call_id: merger.endpoint(a.target) for a in findings.attributions}
    merger.probes(attributed)
    merger.plan_marks()
    merger.check_skips()
    for prop in findings.propositions:
        merger.shown_by(prop)
    return merger.finish(), merger.resolved


class _Merger:
    """One merge: the batch it builds, folded as it grows into an overlay of the state, so
    later items see earlier ones while `state` stays untouched and the cost stays with the
    session, not the graph."""

    def __init__(
        self, state: GraphState, record: ChatRecord, *, run_id: str, now: datetime, ids: IdGen
    ) -> None:
        self.state = state
        self.record = record
        self.chat_id = record.id
        self.run_id = run_id
        self.now = now
        self.ids = ids
        self.batch = LedgerBatch()
        self.work = state.overlay()
        self.resolved: dict[str, str] = {}
        self.upto = foldable_upto(record)

    def proposition(self, prop: FoundProposition) -> None:
        work = self.work
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
            node_id = self._new_node(prop)
        self.resolved[prop.local_id] = node_id
        mapping = MappingLine(
            chat_id=self.chat_id,
            local_id=_mapping_local_id(prop.local_id, prop.plan_node, self.run_id),
            node_id=node_id,
            how=how,
            at=self.now,
            prerequisite=prop.prerequisite,
        )
        if supersedes(mapping, work.mappings.get((self.chat_id, node_id))):
            self.batch.mappings.append(mapping)
            add_mapping(work, mapping)

    def _new_node(self, prop: FoundProposition) -> str:
        node_id = self.ids.new("node")
        aliases = [a for a in dict.fromkeys(prop.aliases) if a != prop.statement]
        line = PropositionLine(
            id=node_id,
            statement=prop.statement,
            kind=prop.kind,
            aliases=aliases,
            chat_id=self.chat_id,
            created_at=self.now,
            evidence=list(prop.evidence),
        )
        self.batch.propositions.append(line)
        add_node(self.work, line)
        return node_id

    def endpoint(self, ref: str) -> str | None:
        """The node a finding's local id became, or an existing node's id."""
        return self.resolved.get(ref) or (ref if ref in self.work.nodes else None)

    def edge(self, edge: FoundEdge) -> None:
        a, b = self.endpoint(edge.from_), self.endpoint(edge.to)
        if a is None or b is None or a == b:
            return
        if self.chat_id in self.work.edges.get((a, b, edge.type), ()):
            return
        line = EdgeLine(
            id=self.ids.new("edge"),
            from_=a,
            to=b,
            type=edge.type,
            chat_id=self.chat_id,
            created_at=self.now,
            evidence=list(edge.evidence),
        )
        self.batch.edges.append(line)
        add_edge(self.work, line)

    def _tagged(self, tag: str | None) -> str | None:
        """The node a tag names: the chat's plan node mapped to it first, else a graph
        node's own id (a review or a "check first" probe names graph nodes directly)."""
        if not tag:
            return None
        work = self.work
        return work.local.get((self.chat_id, f"plan:{tag}")) or (tag if tag in work.nodes else None)

    def probes(self, attributed: dict[str, str | None]) -> None:
        """The record's quiz answers and done marks, as events (each once, by its ref)."""
        for quiz in quiz_probes(self.record, 0, self.upto):
            # A tag that resolves wins; the extractor's judgment only fills the gaps.
            node = self._tagged(quiz.node_tag) or attributed.get(quiz.tool_call_id)
            self._quiz_event(quiz, node)
        for mark in done_marks(self.record, 0, self.upto):
            self._event(
                mark.tool_call_id,
                node_id=self._tagged(mark.node_tag),
                kind="marked_done",
                at=mark.at,
                question=mark.note,
                turn=mark.turn,
            )

    def _quiz_event(self, quiz: GradedQuiz, node: str | None, ref: str = "") -> None:
        self._event(
            quiz.tool_call_id,
            ref=ref,
            node_id=node,
            kind="quiz_correct" if quiz.correct else "quiz_incorrect",
            at=quiz.at,
            question=quiz.question,
            answer=quiz.answer,
            expected=quiz.expected,
            correct=quiz.correct,
            confidence=quiz.confidence,
            turn=quiz.turn,
        )

    def plan_marks(self) -> None:
        """The teacher's re-teach and revisit marks, as `taught` / `marked_revisit` events
        of the nodes they name (with their turn: a probe after a re-teach in its turn is
        aided)."""
        for mark in plan_marks(self.record, 0, self.upto):
            self._event(
                mark.tool_call_id,
                ref=f"{self.chat_id}:{mark.tool_call_id}:{mark.kind}",
                node_id=self._tagged(mark.node_tag),
                kind=mark.kind,
                at=mark.at,
                turn=mark.turn,
            )

    def check_skips(self) -> None:
        """Each "check first" node the teacher moved past unprobed, as a `check_skipped`
        event of the prerequisite's node (at the call that moved on)."""
        window = msgspec.structs.replace(self.record, messages=self.record.messages[: self.upto])
        for skip in skipped_checks(window):
            self._event(
                skip.tool_call_id,
                ref=f"{self.chat_id}:{skip.tool_call_id}:check_skipped:{skip.node_id}",
                node_id=self._tagged(skip.node_id),
                kind="check_skipped",
                at=skip.at,
                turn=skip.turn,
            )

    def shown_by(self, prop: FoundProposition) -> None:
        """Each answer that showed misconception `prop` is a (wrong) probe of its node too,
        unless the quiz already probed that node (a review's discriminating question)."""
        node = self.resolved.get(prop.local_id)
        if node is None or not prop.shown_by:
            return
        quizzes = {q.tool_call_id: q for q in quiz_probes(self.record, 0, self.upto)}
        for tool_call_id in prop.shown_by:
            quiz = quizzes.get(tool_call_id)
            primary = self.work.events.get(f"{self.chat_id}:{tool_call_id}")
            if quiz is None or (primary is not None and primary.node_id == node):
                continue
            self._quiz_event(quiz, node, ref=f"{self.chat_id}:{tool_call_id}>{node}")

    def _event(self, tool_call_id: str, *, ref: str = "", **fields: Any) -> None:
        ref = ref or f"{self.chat_id}:{tool_call_id}"
        if ref in self.work.events:
            return
        event = EventLine(
            id=self.ids.new("event"),
            ref=ref,
            chat_id=self.chat_id,
            tool_call_id=tool_call_id,
            **fields,
        )
        self.batch.events.append(event)
        add_event(self.work, event)

    def finish(self) -> LedgerBatch:
        """The batch, with the chat's checkpoint when anything changed or it moved on."""
        batch = self.batch
        if not batch.is_empty() or self.state.folded_at(self.chat_id) != self.upto:
            batch.sessions.append(
                SessionCheckpoint(
                    chat_id=self.chat_id, folded_at=self.upto, run_id=self.run_id, at=self.now
                )
            )
        return batch


def with_audit(batch: LedgerBatch, audit: Iterable[AuditLine]) -> LedgerBatch:
    """`batch` with audit lines added (the pipeline's gate and auditor drops)."""
    return replace(batch, audit=[*batch.audit, *audit])
