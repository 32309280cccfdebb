"""Knowledge-graph ledgers (append-only JSONL, one writer) and the derived snapshot."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from shared_contracts.base import Body, Id, Record, ToolCallId

NodeKind = Literal["proposition", "misconception"]
EdgeType = Literal["requires", "supports"]
Speaker = Literal["learner", "teacher", "answer"]
NodeState = Literal["introduced", "verified", "shaky", "misconception", "unseen"]
"""`unseen`: a prerequisite a session rested on that no session has shown the learner know
(no learner quote, no probe); UX.md draws it in outline only."""
EventKind = Literal["quiz_correct", "quiz_incorrect", "taught", "marked_done", "asked"]
MappingHow = Literal["created", "statement", "alias"]


class Evidence(Record, kw_only=True, frozen=True):
    """A verbatim quote located in the transcript by the evidence gate."""

    quote: str
    message_id: Id
    turn: int
    speaker: Speaker
    start: int
    end: int


class PropositionLine(Record, kw_only=True, frozen=True):
    id: Id
    statement: str
    kind: NodeKind = "proposition"
    aliases: list[str] = msgspec.field(default_factory=list)
    chat_id: Id
    created_at: datetime
    evidence: list[Evidence] = msgspec.field(default_factory=list)


class EdgeLine(Record, kw_only=True, frozen=True):
    id: Id
    from_: Id = msgspec.field(name="from")
    to: Id
    type: EdgeType
    chat_id: Id
    created_at: datetime
    evidence: list[Evidence] = msgspec.field(default_factory=list)


class EventLine(Record, kw_only=True, frozen=True):
    """A probe or teaching event, rebuilt from the transcript's tool parts by the merger."""

    id: Id
    ref: str
    chat_id: Id
    node_id: Id | None = None
    kind: EventKind
    at: datetime
    tool_call_id: ToolCallId | None = None
    question: str = ""
    answer: str = ""
    expected: str = ""
    correct: bool | None = None
    confidence: float | None = None


class MappingLine(Record, kw_only=True, omit_defaults=True, frozen=True):
    """One line per (chat, graph node): which local item became or matched which node.

    A `prerequisite` mapping says the chat only rested on the node (the learner did not show
    it); a later non-prerequisite line for the same (chat, node) supersedes it."""

    chat_id: Id
    local_id: str
    node_id: Id
    how: MappingHow
    at: datetime
    prerequisite: bool = False


class SessionCheckpoint(Record, kw_only=True, frozen=True):
    chat_id: Id
    folded_at: int
    run_id: Id
    at: datetime


class AuditLine(Record, kw_only=True, frozen=True):
    run_id: Id
    chat_id: Id
    stage: Literal["gate", "auditor"]
    item_kind: Literal["proposition", "edge", "attribution"]
    item: str
    reason: str
    detail: str = ""
    at: datetime


class Probe(Body, kw_only=True, frozen=True):
    at: datetime
    chat_id: Id
    question: str
    answer: str
    expected: str
    correct: bool | None
    confidence: float | None = None


class GraphNode(Body, kw_only=True, frozen=True):
    id: Id
    statement: str
    kind: NodeKind
    state: NodeState
    correct: int = 0
    incorrect: int = 0
    last_probe_at: datetime | None = None
    sessions: list[Id] = msgspec.field(default_factory=list)
    evidence: list[Evidence] = msgspec.field(default_factory=list)
    probes: list[Probe] = msgspec.field(default_factory=list)


class GraphEdge(Body, kw_only=True, frozen=True):
    from_: Id = msgspec.field(name="from")
    to: Id
    type: EdgeType
    chats: list[Id] = msgspec.field(default_factory=list)


class GraphSession(Body, kw_only=True, frozen=True):
    chat_id: Id
    folded_at: int
    at: datetime
    nodes: int = 0


class GraphStats(Body, kw_only=True, frozen=True):
    nodes: int = 0
    edges: int = 0
    events: int = 0
    sessions: int = 0
    by_state: dict[str, int] = msgspec.field(default_factory=dict)
    unattributed_probes: int = 0


class GraphSnapshot(Body, kw_only=True, frozen=True):
    nodes: list[GraphNode] = msgspec.field(default_factory=list)
    edges: list[GraphEdge] = msgspec.field(default_factory=list)
    sessions: list[GraphSession] = msgspec.field(default_factory=list)
    stats: GraphStats = msgspec.field(default_factory=GraphStats)
