"""Prerequisite checks (issue 19 item 7): "check first" nodes for weak prerequisites of what
the teacher plans, and the skip when the teacher moves past one unprobed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from backend.core.plan_tree import apply_plan_tool
from backend.core.prerequisites import (
    PlanChecks,
    at_risk_graph,
    check_notes,
    prerequisite_checks,
    skipped_checks,
    with_checks,
)
from shared_contracts.chat import ChatRecord, Message, ToolPart
from shared_contracts.graph import GraphEdge, GraphNode, GraphSnapshot, NodeState
from shared_contracts.plan import PlanTree, PrerequisiteCheck
from shared_contracts.tools import PlanInitArgs, PlanMarkDoneArgs, PlanNodeSpec

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def node(node_id: str, statement: str, state: NodeState) -> GraphNode:
    return GraphNode(id=node_id, statement=statement, kind="proposition", state=state)


SNAPSHOT = GraphSnapshot(
    nodes=[
        node("n-add", "Adding fractions: Common denominators first", "verified"),
        node("n-equiv", "Equivalent fractions", "fading"),
        node("n-whole", "Adding whole numbers", "unseen"),
        node("n-read", "Reading numbers", "verified"),
        node("n-mult", "Multiplying whole numbers", "shaky"),
    ],
    edges=[
        GraphEdge(from_="n-add", to="n-equiv", type="requires"),
        GraphEdge(from_="n-add", to="n-whole", type="requires"),
        GraphEdge(from_="n-add", to="n-read", type="requires"),
        GraphEdge(from_="n-equiv", to="n-mult", type="requires"),
        GraphEdge(from_="n-add", to="n-mult", type="supports"),
    ],
    as_of=T0,
)


def plan(*specs: PlanNodeSpec) -> PlanTree:
    return apply_plan_tool(None, PlanInitArgs(goal="fractions", nodes=list(specs)))


INTRO = PlanNodeSpec(id="intro", title="What a fraction is")
ADD = PlanNodeSpec(id="add", title="Adding fractions", summary="Common denominators first")
EQUIV = PlanNodeSpec(id="equiv", title="Equivalent fractions")


def test_a_planned_node_gets_a_check_per_weak_prerequisite_it_requires() -> None:
    checks = prerequisite_checks(plan(INTRO, ADD).nodes, SNAPSHOT)
    assert checks == [
        PrerequisiteCheck(node_id="n-equiv", reason="fading", for_nodes=["add"]),
        PrerequisiteCheck(node_id="n-whole", reason="unseen", for_nodes=["add"]),
    ]  # not the verified prerequisite, not a `supports` edge


def test_no_check_for_what_the_plan_teaches_itself() -> None:
    checks = prerequisite_checks(plan(EQUIV, ADD).nodes, SNAPSHOT)
    # "Equivalent fractions" is planned (it gets its own check for a shaky prerequisite)
    assert [(c.node_id, c.for_nodes) for c in checks] == [
        ("n-mult", ["equiv"]),
        ("n-whole", ["add"]),
    ]


def test_checks_go_just_before_their_first_dependent_and_take_its_focus() -> None:
    tree = plan(ADD, INTRO)
    checks = prerequisite_checks(tree.nodes, SNAPSHOT)
    statements = {n.id: n.statement for n in SNAPSHOT.nodes}
    checked = with_checks(tree, checks, statements)
    assert [n.id for n in checked.nodes] == ["n-equiv", "n-whole", "add", "intro"]
    assert checked.current == "n-equiv"
    assert [n.status for n in checked.nodes] == ["active", "pending", "pending", "pending"]
    assert checked.nodes[1].title == "Adding whole numbers"
    assert checked.nodes[1].summary == "Check first: has not been shown yet"
    assert checked.version == tree.version + 1
    assert with_checks(checked, checks, statements) is checked  # already there: unchanged
    notes = check_notes(checks, checked)
    assert "quiz tagged node_id “n-whole”" in notes[1] and "“Adding fractions”" in notes[1]


def record_with(parts: list[ToolPart], tree: PlanTree) -> ChatRecord:
    messages = [
        Message(
            id=f"m{i}",
            role="assistant",
            turn=i + 1,
            created_at=T0 + timedelta(minutes=i),
            parts=[part],
        )
        for i, part in enumerate(parts)
    ]
    return ChatRecord(
        id="c1", title="t", created_at=T0, updated_at=T0, messages=messages, plan=tree
    )


def call(tool: str, call_id: str, **args: object) -> ToolPart:
    return ToolPart(tool_call_id=call_id, tool_name=tool, state="input-available", input=args)


def test_moving_on_to_a_dependent_unprobed_records_a_skip() -> None:
    tree = with_checks(
        plan(ADD), prerequisite_checks(plan(ADD).nodes, SNAPSHOT), {"n-equiv": "Equivalent"}
    )
    probed_one = [
        call("plan_update", "c0", id="add", title="Adding"),  # a retitle is not moving on
        call("quiz", "c1", node_id="n-equiv"),  # the check probed first: not skipped
        call("quiz", "c2", node_id="add"),  # moving on past n-whole, never probed
        call("quiz", "c3", node_id="n-whole"),  # probing it after the skip changes nothing
    ]
    (skip,) = skipped_checks(record_with(probed_one, tree))
    assert (skip.node_id, skip.dependent, skip.tool_call_id, skip.turn) == (
        "n-whole",
        "add",
        "c2",
        3,
    )
    assert skipped_checks(record_with(probed_one[:2], tree)) == []


def test_the_part_of_the_graph_a_session_keeps_gives_the_same_checks() -> None:
    kept = at_risk_graph(SNAPSHOT)
    assert {n.id for n in kept.nodes} == {"n-add", "n-equiv", "n-whole", "n-mult"}
    for planned in (plan(INTRO, ADD), plan(EQUIV, ADD), plan(ADD)):
        assert prerequisite_checks(planned.nodes, kept) == prerequisite_checks(
            planned.nodes, SNAPSHOT
        )


def test_marking_a_dependent_done_skips_the_open_checks_no_quiz_probed() -> None:
    tree = with_checks(plan(ADD), prerequisite_checks(plan(ADD).nodes, SNAPSHOT), {})
    done = PlanMarkDoneArgs(id="add")

    def after(message_parts: list[ToolPart]) -> dict[str, str]:
        now = Message(id="m-now", role="assistant", turn=9, created_at=T0, parts=message_parts)
        checking = PlanChecks(None, now)
        marked = checking.apply(record_with([], tree), apply_plan_tool(tree, done), done)
        assert checking.notes == []
        return {n.id: n.status for n in marked.nodes}

    assert after([]) == {"n-equiv": "skipped", "n-whole": "skipped", "add": "done"}
    probed = after([call("quiz", "q1", node_id="n-equiv")])  # in this turn, not yet saved
    assert probed == {"n-equiv": "active", "n-whole": "skipped", "add": "done"}


def test_a_plan_is_checked_once_and_told_why() -> None:
    now = Message(id="m-now", role="assistant", turn=1, created_at=T0, parts=[])
    checking = PlanChecks(at_risk_graph(SNAPSHOT), now)
    args = PlanInitArgs(goal="fractions", nodes=[INTRO, ADD])
    empty = ChatRecord(id="c1", title="t", created_at=T0, updated_at=T0)
    tree = checking.apply(empty, apply_plan_tool(None, args), args)
    assert [n.id for n in tree.nodes] == ["intro", "n-equiv", "n-whole", "add"]
    assert len(checking.notes) == 2 and "is fading from memory" in checking.notes[0]
