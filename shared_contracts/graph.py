"""Knowledge-graph ledgers (append-only JSONL, one writer) and the derived snapshot."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from shared_contracts.base import Body, Id, Record, ToolCallId

NodeKind = Literal["proposition", "misconception"]
EdgeType = Literal["requires", "supports"]
Speaker = Literal["learner", "teacher", "answer", "material"]
"""Who said a quoted piece of evidence; `material`: a passage of the learner's document a
plan node was taught from (see `Evidence`)."""
NodeState = Literal[
    "introduced", "verified", "shaky", "misconception", "unseen", "fading", "resolved"
]
"""`unseen`: a prerequisite a session rested on that no session has shown the learner know
(no learner quote, no probe); UX.md draws it in outline only. `fading`: verified, but recall
as of the snapshot's moment is below the desired retention. `resolved`: a misconception the
learner rejected unaided in a later session (it reopens on an answer showing it again)."""
EventKind = Literal[
    "quiz_correct",
    "quiz_incorrect",
    "taught",
    "marked_done",
    "asked",
    "marked_revisit",
    "check_skipped",
]
"""`taught`: the teacher re-taught the node (`plan_update` with `reteach`); answers on it in
that turn are aided. `marked_revisit`: the teacher moved on before the learner showed it.
`check_skipped`: a "check first" prerequisite the teacher moved past without probing."""
MappingHow = Literal["created", "statement", "alias"]


class Evidence(Record, kw_only=True, frozen=True):
    """A verbatim quote located in the transcript by the evidence gate; or (speaker
    `material`) a passage of the learner's document that the plan node the proposition came
    from was taught from: then `material_id`, `page` and `start`/`end` (its span of that
    page's stored text) say where it is, and `message_id`/`turn` which message's plan tool
    cited it."""

    quote: str
    message_id: Id
    turn: int
    speaker: Speaker
    start: int
    end: int
    material_id: Id | msgspec.UnsetType = msgspec.UNSET
    page: int | msgspec.UnsetType = msgspec.UNSET


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
    turn: int | msgspec.UnsetType = msgspec.UNSET
    """The chat turn the event happened in (a probe's answer, a `taught` re-teach); unset
    (and then not written, so older lines keep their bytes) where it was not recorded. A
    probe is unaided unless a `taught` event for its node precedes it in the same chat and
    turn (in the same chat at all when either turn is unknown)."""


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


class Memory(Body, kw_only=True, frozen=True):
    """FSRS memory of a node, folded from its probes (each a review at the probe's time)."""

    stability: float
    """Days until recall falls to 90 %."""
    difficulty: float
    """1 (easy) to 10 (hard)."""
    retrievability: float | None = None
    """Recall probability as of the snapshot's `as_of` (None in a snapshot of no moment)."""
    due: datetime
    """When recall falls below the desired retention (whole days after the last review)."""
    last_review: datetime
    reviews: int


class Resolution(Body, kw_only=True, frozen=True):
    """The probe that resolved a misconception: answered right, unaided and not guessed, in
    a later session than the last one that showed the belief."""

    at: datetime
    chat_id: Id
    question: str
    answer: str
    tool_call_id: ToolCallId | None = None


# gc=False (nodes, edges): a snapshot's ~30k of them refer to strings, lists of strings
# and scalar Structs, never back to what holds them, so the collector need not track them
# (a cold read's first collection after the derive: ~25 → ~7 ms).
class GraphNode(Body, kw_only=True, frozen=True, gc=False):
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
    memory: Memory | None = None
    resolution: Resolution | None = None
    """Set while a misconception is `resolved`: when and by which question."""


class GraphEdge(Body, kw_only=True, frozen=True, gc=False):
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
    as_of: datetime | None = None
    """The moment this snapshot shows (lines up to it, memory evaluated then). None: every
    line folded, no retrievability, and no `fading` or `resolved` state (the view for
    readers that predate the learner model)."""
