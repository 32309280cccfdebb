"""Prerequisite checks (advisory): "check first" plan nodes for weak prerequisites.

When the teacher plans a node the learner's graph already holds (the same statement: its
title, or "title: summary" as the offline extractor states one), and that graph node
`requires` a prerequisite that is weak — `fading`, `shaky`, an open `misconception` or
`unseen` (`review.RISKY`) — the plan gets a "check first" node for the prerequisite: its id
is the graph node's own (a quiz tagged with it probes that node), placed just before the
first planned node that rests on it, with a `PrerequisiteCheck` saying why. A prerequisite
the plan itself teaches gets none. The teacher is told in the tool result (`notes`).

The learner is never blocked. If the teacher moves on to a node that rests on a check —
quizzes it, marks it done or leaves it to revisit — before any quiz probed the check, the
check was **skipped** (`skipped_checks`, a pure reading of the transcript): the plan shows
it `skipped` and the merger records a `check_skipped` event on the prerequisite's node.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from msgspec.structs import replace

from backend.core.graph_state import normalise_statement
from backend.core.plan_tree import PlanArgs, close
from backend.core.review import prerequisite_risks
from shared_contracts.chat import ChatRecord, Message, ToolPart
from shared_contracts.graph import GraphNode, GraphSnapshot
from shared_contracts.learner import RiskReason
from shared_contracts.plan import PlanNode, PlanTree, PrerequisiteCheck
from shared_contracts.tools import PlanAddArgs, PlanInitArgs, PlanMarkDoneArgs, PlanUpdateArgs

TITLE_CHARS = 200
MOVING_ON = frozenset({"quiz", "plan_mark_done", "plan_update"})

_WHY: dict[RiskReason, str] = {
    "fading": "is fading from memory",
    "shaky": "was last answered wrong",
    "misconception": "is an open mix-up",
    "unseen": "has not been shown yet",
}


def at_risk_graph(snapshot: GraphSnapshot) -> GraphSnapshot:
    """The part of `snapshot` the checks read: the propositions at risk, their weak
    prerequisites and the `requires` edges between them (what a session keeps from its
    start; the whole graph would be held per open session)."""
    risks = prerequisite_risks(snapshot)
    if not risks:
        return GraphSnapshot(as_of=snapshot.as_of)
    weak = {r.node_id for found in risks.values() for r in found}
    kept = [n for n in snapshot.nodes if n.id in risks or n.id in weak]
    edges = [
        e for e in snapshot.edges if e.type == "requires" and e.from_ in risks and e.to in weak
    ]
    return GraphSnapshot(nodes=kept, edges=edges, as_of=snapshot.as_of)


def open_checks(tree: PlanTree) -> dict[str, PrerequisiteCheck]:
    """The tree's "check first" nodes not yet closed (pending or active), by id."""
    return {
        n.id: n.check
        for n in tree.nodes
        if isinstance(n.check, PrerequisiteCheck) and n.status in ("pending", "active")
    }


def skip_passed(tree: PlanTree, dependent: str, probed: set[str]) -> PlanTree:
    """`tree` with each open check that `dependent` rests on closed as `skipped`, unless a
    quiz probed it (`probed`: node ids quizzes were tagged with): the teacher moved on."""
    for node_id, check in open_checks(tree).items():
        if dependent in check.for_nodes and node_id not in probed:
            tree = close(tree, node_id, "skipped", "moved on before it was checked")
    return tree


def _keys(node: PlanNode) -> set[str]:
    keys = {normalise_statement(node.title)}
    if node.summary.strip():
        keys.add(normalise_statement(f"{node.title}: {node.summary}"))
    return keys - {""}


def prerequisite_checks(
    nodes: Iterable[PlanNode], snapshot: GraphSnapshot
) -> list[PrerequisiteCheck]:
    """The checks `nodes` (newly planned) call for in `snapshot`, one per weak prerequisite,
    in the order their first dependents come."""
    planned = list(nodes)
    by_statement: dict[str, GraphNode] = {}
    for graph_node in snapshot.nodes:
        if graph_node.kind == "proposition":
            by_statement.setdefault(normalise_statement(graph_node.statement), graph_node)
    taught = {key for node in planned for key in _keys(node)}
    risks = prerequisite_risks(snapshot)
    checks: dict[str, PrerequisiteCheck] = {}
    for node in planned:
        matched = next((by_statement[k] for k in _keys(node) if k in by_statement), None)
        for risk in risks.get(matched.id, []) if matched is not None else []:
            if normalise_statement(risk.statement) in taught:
                continue  # the plan teaches it itself
            found = checks.get(risk.node_id)
            if found is None:
                checks[risk.node_id] = PrerequisiteCheck(
                    node_id=risk.node_id, reason=risk.reason, for_nodes=[node.id]
                )
            elif node.id not in found.for_nodes:
                checks[risk.node_id] = replace(found, for_nodes=[*found.for_nodes, node.id])
    return list(checks.values())


def with_checks(
    tree: PlanTree, checks: list[PrerequisiteCheck], statements: dict[str, str]
) -> PlanTree:
    """`tree` with a "check first" node per check not already in it, each just before its
    first dependent (as that node's sibling); the focus moves to a check placed before the
    current node. `statements`: graph node id → statement (the check node's title)."""
    ids = {n.id for n in tree.nodes}
    fresh = [c for c in checks if c.node_id not in ids]
    if not fresh:
        return tree
    nodes = list(tree.nodes)
    current = tree.current
    for check in fresh:
        at = next(i for i, n in enumerate(nodes) if n.id in check.for_nodes)
        dependent = nodes[at]
        title = statements.get(check.node_id, check.node_id)[:TITLE_CHARS]
        nodes.insert(
            at,
            PlanNode(
                id=check.node_id,
                title=title,
                summary=f"Check first: {_WHY[check.reason]}",
                parent=dependent.parent,
                check=check,
            ),
        )
        if current == dependent.id:
            current = check.node_id
    focused = [
        replace(n, status="active")
        if n.id == current
        else replace(n, status="pending")
        if n.status == "active"
        else n
        for n in nodes
    ]
    return replace(tree, nodes=focused, current=current, version=tree.version + 1)


def check_notes(checks: list[PrerequisiteCheck], tree: PlanTree) -> list[str]:
    """What the teacher is told about each new check (in the plan tool's result)."""
    titles = {n.id: n.title for n in tree.nodes}
    notes = []
    for check in checks:
        dependents = ", ".join(f"“{titles.get(d, d)}”" for d in check.for_nodes)
        notes.append(
            f"Check first: the learner's graph says “{titles.get(check.node_id, check.node_id)}” "
            f"{_WHY[check.reason]}, and {dependents} rests on it. It is in the plan as "
            f"node {check.node_id}: probe it with a quiz tagged node_id “{check.node_id}” "
            "before teaching what rests on it (mark it done if the learner shows it). This "
            "is advice: if you move on without probing it, the skip is recorded."
        )
    return notes


@dataclass(frozen=True, slots=True)
class SkippedCheck:
    """A "check first" node the teacher moved past: the call that moved on, and when."""

    node_id: str
    dependent: str
    tool_call_id: str
    turn: int
    at: datetime


def skipped_checks(record: ChatRecord) -> list[SkippedCheck]:
    """The record's plan's checks that the transcript moved past unprobed (see the module),
    in transcript order."""
    if record.plan is None:
        return []
    open_checks = {
        n.id: n.check for n in record.plan.nodes if isinstance(n.check, PrerequisiteCheck)
    }
    skipped: list[SkippedCheck] = []
    for message in record.messages:
        for part in message.parts:
            if not open_checks:
                return skipped
            if not isinstance(part, ToolPart) or part.tool_name not in MOVING_ON:
                continue
            tag = _tag(part)
            if tag is None:
                continue
            if part.tool_name == "quiz" and tag in open_checks:
                del open_checks[tag]  # probed: checked, not skipped
                continue
            for node_id, check in list(open_checks.items()):
                if tag in check.for_nodes and _moves_on(part):
                    skipped.append(
                        SkippedCheck(
                            node_id, tag, part.tool_call_id, message.turn, message.created_at
                        )
                    )
                    del open_checks[node_id]
    return skipped


def _tag(part: ToolPart) -> str | None:
    tag = part.input.get("node_id" if part.tool_name == "quiz" else "id")
    return tag if isinstance(tag, str) else None


def _moves_on(part: ToolPart) -> bool:
    """A quiz asked, a node marked done, or a node left to revisit (not a mere retitle)."""
    if part.tool_name == "plan_update":
        return part.input.get("status") == "revisit" and part.state == "output-available"
    if part.tool_name == "plan_mark_done":
        return part.state == "output-available"
    return part.state in ("input-available", "output-available")


class PlanChecks:
    """A plan tool's prerequisite checks, applied to the tree it produced: new nodes get
    "check first" nodes for their weak prerequisites in `at_risk` (the session's graph;
    None: nothing to check against), told in `notes`; a node marked done or left to
    revisit skips the open checks it rests on that no quiz probed (in the record, or in
    `message`, the turn's own message not yet saved)."""

    def __init__(self, at_risk: GraphSnapshot | None, message: Message) -> None:
        self._at_risk = at_risk
        self._message = message
        self.notes: list[str] = []

    def apply(self, record: ChatRecord, tree: PlanTree, args: PlanArgs) -> PlanTree:
        moved = _moved_on(args)
        if moved is not None:
            return skip_passed(tree, moved, self.probed(record))
        if self._at_risk is None or not isinstance(args, PlanInitArgs | PlanAddArgs):
            return tree
        before = {n.id for n in record.plan.nodes} if record.plan and not _is_init(args) else set()
        added = [
            n
            for n in tree.nodes
            if n.id not in before and not isinstance(n.check, PrerequisiteCheck)
        ]
        checks = prerequisite_checks(added, self._at_risk)
        statements = {n.id: n.statement for n in self._at_risk.nodes}
        checked = with_checks(tree, checks, statements)
        self.notes = check_notes(checks, checked)
        return checked

    def probed(self, record: ChatRecord) -> set[str]:
        """Node ids quizzes were tagged with, in the record and the turn's message."""
        parts = [p for m in record.messages for p in m.parts]
        parts += [
            p
            for p in self._message.parts
            if self._message.id not in {m.id for m in record.messages}
        ]
        return {
            tag
            for p in parts
            if isinstance(p, ToolPart)
            and p.tool_name == "quiz"
            and isinstance(tag := p.input.get("node_id"), str)
        }


def _is_init(args: PlanArgs) -> bool:
    return isinstance(args, PlanInitArgs)


def _moved_on(args: PlanArgs) -> str | None:
    """The node a plan call moves on from (done, or left to revisit), if it does."""
    if isinstance(args, PlanMarkDoneArgs):
        return args.id
    if isinstance(args, PlanUpdateArgs) and args.status == "revisit":
        return args.id
    return None
