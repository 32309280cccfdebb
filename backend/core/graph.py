"""The knowledge graph, pure: fold ledger lines into a state, derive the snapshot, merge.

Fold is incremental and tolerant of duplicates: the first line per node id, per event ref
and per (chat, node) mapping wins; edges aggregate by (from, to, type) with the chats that
asserted them; a chat's checkpoint is its last `sessions` line.

Merge (the merger) is conservative: identity only by normalised statement or alias within
the same kind (a misconception never merges with a proposition) — a duplicate over a wrong
merge. Events are rebuilt from the transcript's tool parts, never from the model.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from backend.core.graph_probes import done_marks, quiz_probes
from backend.core.pending import foldable_upto
from backend.core.ports import Clock, IdGen, LedgerBatch
from shared_contracts.chat import ChatRecord
from shared_contracts.extraction import Findings
from shared_contracts.graph import (
    EdgeLine,
    EdgeType,
    EventLine,
    GraphEdge,
    GraphNode,
    GraphSession,
    GraphSnapshot,
    GraphStats,
    MappingLine,
    NodeKind,
    NodeState,
    Probe,
    PropositionLine,
    SessionCheckpoint,
)

PROBE_KINDS = frozenset({"quiz_correct", "quiz_incorrect"})
RECENT_PROBES = 2
"""Node state rule: the latest `RECENT_PROBES` probes all correct → verified, any of them
incorrect → shaky; no probes → introduced; kind misconception → misconception."""

EdgeKey = tuple[str, str, EdgeType]


@dataclass(slots=True)
class GraphState:
    """Everything folded from the ledgers so far. Treat as immutable: `fold` returns a new
    state and never touches the one it was given."""

    nodes: dict[str, PropositionLine] = field(default_factory=dict)
    rank: dict[str, int] = field(default_factory=dict)
    """Creation order of each node (its position in the ledger)."""
    identity: dict[tuple[NodeKind, str], str] = field(default_factory=dict)
    edges: dict[EdgeKey, tuple[str, ...]] = field(default_factory=dict)
    events: dict[str, EventLine] = field(default_factory=dict)
    mappings: dict[tuple[str, str], MappingLine] = field(default_factory=dict)
    local: dict[tuple[str, str], str] = field(default_factory=dict)
    checkpoints: dict[str, SessionCheckpoint] = field(default_factory=dict)
    audit_lines: int = 0

    def folded_at(self, chat_id: str) -> int:
        """Messages of `chat_id` already folded (0 when never extracted)."""
        checkpoint = self.checkpoints.get(chat_id)
        return checkpoint.folded_at if checkpoint else 0

    def copy(self) -> GraphState:
        return GraphState(
            nodes=dict(self.nodes),
            rank=dict(self.rank),
            identity=dict(self.identity),
            edges=dict(self.edges),
            events=dict(self.events),
            mappings=dict(self.mappings),
            local=dict(self.local),
            checkpoints=dict(self.checkpoints),
            audit_lines=self.audit_lines,
        )


def normalise_statement(text: str) -> str:
    """The identity key of a statement: NFKC, casefold, single spaces, no end punctuation."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.split()).rstrip(" .!?;:")


def _identity_keys(line: PropositionLine) -> Iterable[tuple[NodeKind, str]]:
    for text in (line.statement, *line.aliases):
        key = normalise_statement(text)
        if key:
            yield line.kind, key


def _apply(state: GraphState, batch: LedgerBatch) -> None:
    """Fold `batch` into `state` in place (only ever on a private copy)."""
    for line in batch.propositions:
        if line.id in state.nodes:
            continue
        state.rank[line.id] = len(state.nodes)
        state.nodes[line.id] = line
        for key in _identity_keys(line):
            state.identity.setdefault(key, line.id)
    for edge in batch.edges:
        key = (edge.from_, edge.to, edge.type)
        chats = state.edges.get(key, ())
        if edge.chat_id not in chats:
            state.edges[key] = (*chats, edge.chat_id)
    for event in batch.events:
        state.events.setdefault(event.ref, event)
    for mapping in batch.mappings:
        state.mappings.setdefault((mapping.chat_id, mapping.node_id), mapping)
        state.local.setdefault((mapping.chat_id, mapping.local_id), mapping.node_id)
    for checkpoint in batch.sessions:
        state.checkpoints[checkpoint.chat_id] = checkpoint
    state.audit_lines += len(batch.audit)


def fold(state: GraphState, batch: LedgerBatch) -> GraphState:
    """A new state with `batch` folded in; folding in two batches equals folding once."""
    if batch.is_empty():
        return state
    new = state.copy()
    _apply(new, batch)
    return new


def node_state(kind: NodeKind, probes: list[EventLine]) -> NodeState:
    """The derived state of a node from its probes in time order (see `RECENT_PROBES`)."""
    if kind == "misconception":
        return "misconception"
    if not probes:
        return "introduced"
    recent = probes[-RECENT_PROBES:]
    return "verified" if all(p.correct for p in recent) else "shaky"


def derive_snapshot(state: GraphState) -> GraphSnapshot:
    """The read model: nodes with derived states and probes, merged edges, sessions."""
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
    nodes: list[GraphNode] = []
    by_state: dict[str, int] = {}
    for node_id, line in state.nodes.items():
        seen = sorted(probes.get(node_id, []), key=lambda e: (e.at, e.ref))
        derived = node_state(line.kind, seen)
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
    work = state.copy()  # the batch folded in as it grows, so later items see earlier ones
    resolved: dict[str, str] = {}

    def add(**lines: list) -> None:
        part = LedgerBatch(**lines)
        for name in ("propositions", "edges", "events", "mappings"):
            getattr(batch, name).extend(getattr(part, name))
        _apply(work, part)

    for prop in findings.propositions:
        keys = [
            (prop.kind, k) for k in map(normalise_statement, [prop.statement, *prop.aliases]) if k
        ]
        # Of every node matching one of its keys, a finding takes the OLDEST: nodes created
        # later are younger, so a re-run or a later batch never changes a resolution.
        node_id, how = None, "created"
        candidates = {work.identity[key] for key in keys if key in work.identity}
        if candidates:
            node_id = min(candidates, key=work.rank.__getitem__)
            same = normalise_statement(work.nodes[node_id].statement) == keys[0][1]
            how = "statement" if same else "alias"
        new_lines: dict[str, list] = {"propositions": [], "mappings": []}
        if node_id is None:
            node_id = ids.new("node")
            aliases = [a for a in dict.fromkeys(prop.aliases) if a != prop.statement]
            new_lines["propositions"].append(
                PropositionLine(
                    id=node_id,
                    statement=prop.statement,
                    kind=prop.kind,
                    aliases=aliases,
                    chat_id=chat_id,
                    created_at=now,
                    evidence=list(prop.evidence),
                )
            )
        resolved[prop.local_id] = node_id
        local_id = _mapping_local_id(prop.local_id, prop.plan_node, run_id)
        if (chat_id, node_id) not in work.mappings:
            new_lines["mappings"].append(
                MappingLine(chat_id=chat_id, local_id=local_id, node_id=node_id, how=how, at=now)
            )
        add(**new_lines)

    def endpoint(ref: str) -> str | None:
        return resolved.get(ref) or (ref if ref in work.nodes else None)

    for edge in findings.edges:
        a, b = endpoint(edge.from_), endpoint(edge.to)
        if a is None or b is None or a == b or chat_id in work.edges.get((a, b, edge.type), ()):
            continue
        line = EdgeLine(
            id=ids.new("edge"),
            from_=a,
            to=b,
            type=edge.type,
            chat_id=chat_id,
            created_at=now,
            evidence=list(edge.evidence),
        )
        add(edges=[line])

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
        add(events=[event])
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
        add(events=[event])

    if not batch.is_empty() or state.folded_at(chat_id) != upto:
        batch.sessions.append(
            SessionCheckpoint(chat_id=chat_id, folded_at=upto, run_id=run_id, at=now)
        )
    return batch, resolved


def with_audit(batch: LedgerBatch, audit: Iterable) -> LedgerBatch:
    """`batch` with audit lines added (the pipeline's gate and auditor drops)."""
    return replace(batch, audit=[*batch.audit, *audit])
