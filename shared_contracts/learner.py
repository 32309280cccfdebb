"""The learner model's reads, derived from the graph ledgers as of a moment: the review
queue, the prerequisites that put a node at risk, what a review session's teacher gets,
and how well the learner's stated confidence matches their answers."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from shared_contracts.base import Body, Id
from shared_contracts.graph import NodeKind, NodeState, Probe

ReviewReason = Literal["confidently_wrong", "misconception_open", "due", "prerequisite_at_risk"]
"""Why a node is in the review queue, most urgent first: its latest answer was wrong though
the learner said they were sure; an open misconception; recall below the desired retention;
a weak prerequisite of nodes that build on it."""

RiskReason = Literal["fading", "shaky", "misconception", "unseen"]
"""Why a prerequisite puts the nodes that require it at risk (its derived state)."""

CalibrationVerdict = Literal["overconfident", "underconfident", "calibrated", "too_few_answers"]


class ReviewItem(Body, kw_only=True, frozen=True):
    node_id: Id
    statement: str
    kind: NodeKind
    state: NodeState
    reason: ReviewReason
    retrievability: float | None = None
    """Recall probability as of the queue's moment (None: never probed)."""
    due: datetime | None = None
    priority: int
    """1 is the most urgent; the queue is in this order."""
    detail: str
    """Why, in a sentence the learner understands."""


class ReviewQueue(Body, kw_only=True, frozen=True):
    as_of: datetime
    items: list[ReviewItem] = msgspec.field(default_factory=list)
    total: int = 0
    """How many nodes are queued (`items` may hold only the first of them)."""


class PrerequisiteRisk(Body, kw_only=True, frozen=True):
    """A prerequisite (the `to` of a `requires` edge) that puts a node at risk."""

    node_id: Id
    statement: str
    reason: RiskReason


class ReviewBriefItem(Body, kw_only=True, frozen=True):
    """What a review session's teacher gets per queued item."""

    node_id: Id
    statement: str
    kind: NodeKind
    reason: ReviewReason
    detail: str
    wrong_belief: str = ""
    """For a misconception: the belief to discriminate against (its statement)."""
    probes: list[Probe] = msgspec.field(default_factory=list)
    """The questions that probed the node, most recent last."""


class Calibration(Body, kw_only=True, frozen=True):
    """Stated confidence against correctness, over the graded answers that carry one."""

    answers: int
    brier: float | None = None
    """Mean squared difference of confidence and correctness (0 best; None: no answers)."""
    accuracy: float | None = None
    mean_confidence: float | None = None
    verdict: CalibrationVerdict
