"""The plan tree: the teacher's visible map of what this session teaches."""

from __future__ import annotations

from typing import Literal

import msgspec

from shared_contracts.base import Id, Record
from shared_contracts.learner import RiskReason
from shared_contracts.materials import Passage

PlanStatus = Literal["pending", "active", "done", "revisit", "skipped"]
"""`revisit`: the teacher moved on before the learner showed the node ("to revisit"; a
review session takes such nodes first). `skipped`: a "check first" node the teacher moved
past without probing it (the skip is recorded; the learner is never blocked)."""


class PrerequisiteCheck(Record, kw_only=True, frozen=True):
    """What makes a plan node a "check first" node: a prerequisite in the learner's graph
    (`node_id`, also the plan node's id) that planned nodes require and that is weak."""

    node_id: Id
    reason: RiskReason
    """Why it is weak: `fading`, `shaky`, `misconception` or `unseen`."""
    for_nodes: list[Id] = msgspec.field(default_factory=list)
    """The plan nodes that rest on it."""


class PlanNode(Record, kw_only=True, frozen=True):
    id: Id
    title: str
    summary: str = ""
    parent: Id | None = None
    status: PlanStatus = "pending"
    done_note: str = ""
    passages: list[Passage] | msgspec.UnsetType = msgspec.UNSET
    """The document passages this node teaches (a lesson from a document), each checked
    verbatim against the stored text. Unset (and not written) when there are none, so a
    plan without a document encodes as before."""
    check: PrerequisiteCheck | msgspec.UnsetType = msgspec.UNSET
    """Set on a "check first" node the server added (see `PrerequisiteCheck`); unset (and
    not written) on every other node."""


class PlanTree(Record, kw_only=True, frozen=True):
    goal: str
    nodes: list[PlanNode] = msgspec.field(default_factory=list)
    current: Id | None = None
    version: int = 0
