"""The extraction pipeline's structured outputs: what the extractor and the auditor answer
(their JSON Schemas go to the model as `response_format`), and the findings the evidence
gate lets through (quotes located in the transcript).

Item keys: a proposition is keyed by its `local_id`, an edge by `"<from>-><to>:<type>"`, an
attribution by its `tool_call_id`; the auditor's verdicts and the audit ledger use them.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from shared_contracts.base import Inbound, Record
from shared_contracts.graph import EdgeType, Evidence, NodeKind

LocalId = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
Statement = Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]
Quote = Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]
ItemKind = Literal["proposition", "edge", "attribution"]


def edge_key(from_: str, to: str, type_: str) -> str:
    """The item key of an edge in verdicts and audit lines."""
    return f"{from_}->{to}:{type_}"


class ProposedProposition(Inbound, kw_only=True, frozen=True):
    """Something the learner learned (or wrongly believes: kind `misconception`)."""

    local_id: LocalId
    statement: Statement
    kind: NodeKind
    plan_node: str | None
    """The plan node id this proposition is what that node teaches, else null."""
    evidence: list[Quote]
    """Verbatim quotes from the transcript: at least one from the learner or an answer
    (for a prerequisite, any speaker's)."""
    aliases: list[Statement] = msgspec.field(default_factory=list)
    prerequisite: bool = False
    """True: the session's material rests on it but the learner has not shown it."""
    shown_by: list[LocalId] = msgspec.field(default_factory=list)
    """For a misconception: the graded quizzes (tool call ids) whose wrong answer shows
    this belief; each becomes a probe of the misconception's node."""


class ProposedEdge(Inbound, kw_only=True, frozen=True):
    """`from` requires / supports `to`; endpoints are local ids or existing graph node ids."""

    from_: LocalId = msgspec.field(name="from")
    to: LocalId
    type: EdgeType
    evidence: list[Quote] = msgspec.field(default_factory=list)

    def key(self) -> str:
        return edge_key(self.from_, self.to, self.type)


class ProposedAttribution(Inbound, kw_only=True, frozen=True):
    """An untagged quiz (by tool call id) tested this proposition (local id or node id)."""

    tool_call_id: LocalId
    target: LocalId
    evidence: list[Quote] = msgspec.field(default_factory=list)


class ExtractorOutput(Inbound, kw_only=True, frozen=True):
    """The extractor's whole answer for one run."""

    propositions: list[ProposedProposition]
    edges: list[ProposedEdge]
    attributions: list[ProposedAttribution]


class AuditVerdict(Inbound, kw_only=True, frozen=True):
    """The auditor's judgment of one item: is it supported by its located evidence?"""

    item_kind: ItemKind
    item: str
    supported: bool
    reason: str


class AuditorOutput(Inbound, kw_only=True, frozen=True):
    """The auditor's whole answer; an item with no verdict is dropped (`not_judged`)."""

    verdicts: list[AuditVerdict]


class FoundProposition(Record, kw_only=True, frozen=True):
    """A proposition whose every quote the gate located."""

    local_id: str
    statement: str
    kind: NodeKind = "proposition"
    plan_node: str | None = None
    aliases: list[str] = msgspec.field(default_factory=list)
    evidence: list[Evidence] = msgspec.field(default_factory=list)
    prerequisite: bool = False
    shown_by: list[str] = msgspec.field(default_factory=list)
    """For a misconception: the wrong graded answers (tool call ids) that show it."""


class FoundEdge(Record, kw_only=True, frozen=True):
    from_: str = msgspec.field(name="from")
    to: str
    type: EdgeType
    evidence: list[Evidence] = msgspec.field(default_factory=list)

    def key(self) -> str:
        return edge_key(self.from_, self.to, self.type)


class FoundAttribution(Record, kw_only=True, frozen=True):
    tool_call_id: str
    target: str
    evidence: list[Evidence] = msgspec.field(default_factory=list)


class Findings(Record, kw_only=True, frozen=True):
    """What survived the gate (and then the auditor): the merger's input."""

    propositions: list[FoundProposition] = msgspec.field(default_factory=list)
    edges: list[FoundEdge] = msgspec.field(default_factory=list)
    attributions: list[FoundAttribution] = msgspec.field(default_factory=list)
