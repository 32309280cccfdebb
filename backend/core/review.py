"""What to study now, from a snapshot as of a moment: risk along `requires` edges, the review
queue, and what a review session's teacher gets. Pure functions of the snapshot.

A node is **at risk** when a prerequisite it requires (the `to` of its `requires` edge) is
`fading`, `shaky`, an open `misconception` or `unseen`.

The **review queue**, most urgent first, each node once under its most urgent reason:
1. `confidently_wrong`: the node's latest answer was wrong though the learner said they
   were sure (a misconception shown again, or a slip made with confidence); newest first.
2. `misconception_open`: other open misconceptions; those shown by a wrong answer first
   (newest first), then the rest, newest node first.
3. `due`: recall below the desired retention (fading, shaky, or a resolved misconception
   to confirm); lowest retrievability first, then earliest due.
4. `prerequisite_at_risk`: weak prerequisites not already queued (shaky but not yet due,
   or unseen); those that more nodes require first.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from heapq import nsmallest
from itertools import chain, islice
from operator import itemgetter
from typing import NamedTuple

from backend.core.memory import DAY, SURE_FROM, MemoryPolicy
from shared_contracts.graph import GraphNode, GraphSnapshot, NodeState, Probe
from shared_contracts.learner import (
    PrerequisiteRisk,
    ReviewBriefItem,
    ReviewItem,
    ReviewQueue,
    ReviewReason,
    RiskReason,
)

RISKY: dict[NodeState, RiskReason] = {
    "fading": "fading",
    "shaky": "shaky",
    "misconception": "misconception",
    "unseen": "unseen",
}
BRIEF_PROBES = 3
"""The most recent probes of each item a review session's teacher gets."""
QUEUE_LIMIT = 50
"""Items a queue holds by default: home shows the count (`total`) and the top reasons, a
review session takes the first few; every node is ranked either way. After months away
nearly every node is due, and a sentence for each of 9k items costs more than the ranking
(B16)."""


def prerequisite_risks(snapshot: GraphSnapshot) -> dict[str, list[PrerequisiteRisk]]:
    """node id → the prerequisites that put it at risk (nodes not at risk are absent)."""
    by_id = {n.id: n for n in snapshot.nodes}
    risks: dict[str, list[PrerequisiteRisk]] = {}
    for dependent, prerequisite in _weak_requirements(snapshot, by_id):
        reason = RISKY[prerequisite.state]
        risk = PrerequisiteRisk(
            node_id=prerequisite.id, statement=prerequisite.statement, reason=reason
        )
        risks.setdefault(dependent, []).append(risk)
    return risks


def _weak_requirements(
    snapshot: GraphSnapshot, by_id: dict[str, GraphNode]
) -> Iterator[tuple[str, GraphNode]]:
    """(dependent id, weak prerequisite) per `requires` edge to a weak node, in edge order."""
    for edge in snapshot.edges:
        if edge.type == "requires":
            prerequisite = by_id[edge.to]
            if prerequisite.state in RISKY:
                yield edge.from_, prerequisite


_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def _when(at: datetime) -> str:
    return f"{at.day} {_MONTHS[at.month - 1]} {at.year}"


def _ago(as_of: datetime, at: datetime) -> str:
    days = (as_of - at) // DAY
    if days < 1:
        return "earlier today"
    if days < 2:
        return "yesterday"
    if days < 14:
        return f"{days} days ago"
    if days < 60:
        return f"{days // 7} weeks ago"
    if days < 730:
        return f"{days // 30} months ago"
    return f"{days // 365} years ago"


def _quoted(text: str) -> str:
    return f"“{' '.join(text.split())}”"


def _belief(statement: str) -> str:
    return " ".join(statement.split()).rstrip(" .")


def _last_wrong(node: GraphNode) -> Probe | None:
    return next((p for p in reversed(node.probes) if p.correct is False), None)


def _detail_confidently_wrong(probe: Probe) -> str:
    said = f"You said you were sure, and answered {_quoted(probe.answer)}"
    return f"{said}; the answer was {_quoted(probe.expected)}." if probe.expected else f"{said}."


def _detail_misconception(node: GraphNode) -> str:
    wrong = _last_wrong(node)
    text = f"A mix-up to clear up: {_belief(node.statement)}."
    if wrong is None:
        return text
    return f"{text} It showed on {_when(wrong.at)}, when you answered {_quoted(wrong.answer)}."


def _detail_due(node: GraphNode, recall: float, as_of: datetime) -> str:
    last = node.memory.last_review if node.memory else as_of
    chance = f"about {round(recall * 100)}%"
    if node.state == "shaky":
        return f"Your last answer, {_ago(as_of, last)}, was wrong; you'd now recall it {chance}."
    if node.state == "resolved":
        return f"You cleared this mix-up; worth confirming (recall now {chance})."
    if node.state == "fading":
        return f"You knew this {_ago(as_of, last)}; you'd now recall it {chance} of the time."
    return f"Last checked {_ago(as_of, last)}; you'd now recall it {chance} of the time."


_RISK_WORDS: dict[NodeState, str] = {
    "unseen": "you have not shown it yet",
    "shaky": "your last answer on it was wrong",
    "fading": "it is fading",
    "misconception": "it is a mix-up",
}


def _detail_prerequisite(node: GraphNode, dependents: list[GraphNode]) -> str:
    first = _quoted(dependents[0].statement)
    others = len(dependents) - 1
    who = f"{first} builds" if not others else f"{first} and {others} more build"
    return f"{who} on this, and {_RISK_WORDS.get(node.state, 'it is not solid yet')}."


class _Ranking(NamedTuple):
    """The queue's nodes by reason, each part in its order (see the module)."""

    urgent: list[tuple[ReviewReason, GraphNode]]
    """Confidently wrong, then open misconceptions: few, ranked in full."""
    due: list[tuple[float, datetime, int, GraphNode]]
    """(recall, due, rank, node): unsorted, as most of a long-idle graph is due."""
    weak: list[tuple[GraphNode, list[str]]]
    """Weak prerequisites not queued above, each with the nodes requiring it."""

    @property
    def total(self) -> int:
        return len(self.urgent) + len(self.due) + len(self.weak)

    def first(self, limit: int | None) -> Iterator[tuple[ReviewReason, GraphNode]]:
        """The first `limit` (None: all) queued nodes with their reasons, in order. Only the
        due nodes that make the cut are sorted."""
        room = None if limit is None else max(0, limit - len(self.urgent))
        due = (
            sorted(self.due) if room is None or room >= len(self.due) else nsmallest(room, self.due)
        )
        ranked = chain(
            self.urgent,
            (("due", node) for *_, node in due),
            (("prerequisite_at_risk", node) for node, _ in self.weak),
        )
        return islice(ranked, limit)


def _ranked(snapshot: GraphSnapshot, retention: float) -> _Ranking:
    """Every queued node with its reason (see the module): one pass over the nodes, one over
    the `requires` edges to weak nodes queued for no other reason."""
    wrong: list[tuple[datetime, int, GraphNode]] = []
    shown: list[tuple[datetime, int, GraphNode]] = []
    unshown: list[tuple[int, GraphNode]] = []
    due: list[tuple[float, datetime, int, GraphNode]] = []
    spare: dict[str, GraphNode] = {}  # weak nodes not queued (yet): prerequisites at risk?
    for index, node in enumerate(snapshot.nodes):
        probes = node.probes
        if probes:
            last = probes[-1]
            confidence = last.confidence
            if last.correct is False and confidence is not None and confidence >= SURE_FROM:
                wrong.append((last.at, index, node))
                continue
        state = node.state
        if state == "misconception":
            last_wrong = _last_wrong(node)
            if last_wrong is None:
                unshown.append((index, node))
            else:
                shown.append((last_wrong.at, index, node))
            continue
        memory = node.memory
        if memory is not None:
            recall = memory.retrievability
            if recall is not None and recall < retention:
                due.append((recall, memory.due, index, node))
                continue
        if state in RISKY:
            spare[node.id] = node
    wrong.sort(key=itemgetter(0, 1), reverse=True)
    shown.sort(key=itemgetter(0, 1), reverse=True)
    unshown.reverse()
    urgent: list[tuple[ReviewReason, GraphNode]] = [("confidently_wrong", n) for *_, n in wrong]
    urgent += [("misconception_open", n) for *_, n in shown]
    urgent += [("misconception_open", n) for _, n in unshown]
    dependents: dict[str, list[str]] = {}
    if spare:
        for edge in snapshot.edges:
            if edge.type == "requires" and edge.to in spare:
                dependents.setdefault(edge.to, []).append(edge.from_)
    weak = sorted(dependents.items(), key=lambda pd: -len(pd[1]))
    return _Ranking(urgent, due, [(spare[p], d) for p, d in weak])


def review_queue(
    snapshot: GraphSnapshot,
    policy: MemoryPolicy | None = None,
    *,
    limit: int | None = QUEUE_LIMIT,
) -> ReviewQueue:
    """The review queue of `snapshot` (derived as of a moment), most urgent first (see the
    module): its first `limit` items (None: all), and in `total` how many nodes are queued.
    `ValueError` for a snapshot of no moment."""
    as_of = snapshot.as_of
    if as_of is None:
        raise ValueError("the review queue needs a snapshot derived as of a moment")
    retention = (policy if policy is not None else MemoryPolicy()).desired_retention
    ranking = _ranked(snapshot, retention)
    dependents = {node.id: ids for node, ids in ranking.weak}
    by_id: dict[str, GraphNode] = {}
    items: list[ReviewItem] = []
    for priority, (reason, node) in enumerate(ranking.first(limit), start=1):
        memory = node.memory
        recall = memory.retrievability if memory is not None else None
        if reason == "confidently_wrong":
            detail = _detail_confidently_wrong(node.probes[-1])
        elif reason == "misconception_open":
            detail = _detail_misconception(node)
        elif reason == "due":
            assert recall is not None
            detail = _detail_due(node, recall, as_of)
        else:
            by_id = by_id or {n.id: n for n in snapshot.nodes}
            detail = _detail_prerequisite(node, [by_id[d] for d in dependents[node.id]])
        items.append(
            ReviewItem(
                node_id=node.id,
                statement=node.statement,
                kind=node.kind,
                state=node.state,
                reason=reason,
                retrievability=recall,
                due=memory.due if memory is not None else None,
                priority=priority,
                detail=detail,
            )
        )
    return ReviewQueue(as_of=as_of, items=items, total=ranking.total)


def review_brief(
    snapshot: GraphSnapshot, queue: ReviewQueue, *, limit: int = 8
) -> list[ReviewBriefItem]:
    """What a review session's teacher gets for the first `limit` queued items: each with
    the questions that probed it (the latest `BRIEF_PROBES`) and, for a misconception, the
    wrong belief to discriminate against."""
    by_id = {n.id: n for n in snapshot.nodes}
    brief = []
    for item in queue.items[:limit]:
        node = by_id[item.node_id]
        brief.append(
            ReviewBriefItem(
                node_id=node.id,
                statement=node.statement,
                kind=node.kind,
                reason=item.reason,
                detail=item.detail,
                wrong_belief=node.statement if node.kind == "misconception" else "",
                probes=node.probes[-BRIEF_PROBES:],
            )
        )
    return brief
