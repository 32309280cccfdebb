"""The classroom's plan tree shows the learner model's marks (issue 19 items 7 and 8): a
"check first" node (a weak prerequisite, why, and what rests on it), a node left "to
revisit", a check moved past; the highlight follows the tree's `current`."""

from __future__ import annotations

from shared_contracts.plan import PlanNode, PlanTree, PrerequisiteCheck
from ui.components.plan_panel import MARKS, plan_panel
from ui.model.plan_view import plan_rows
from ui.state.room_state import PlanState

CHECK = PrerequisiteCheck(node_id="whole-numbers", reason="fading", for_nodes=["add", "compare"])
PLAN = PlanTree(
    goal="Fractions",
    nodes=[
        PlanNode(
            id="whole-numbers",
            title="Multiplying whole numbers",
            summary="Check first: fading",
            check=CHECK,
        ),
        PlanNode(id="meaning", title="What a fraction means", status="done"),
        PlanNode(id="add", title="Adding fractions", status="revisit"),
        PlanNode(id="compare", title="Comparing fractions", status="active"),
        PlanNode(id="tens", title="Place value", status="skipped", check=CHECK),
        PlanNode(id="mixed", title="Mixed numbers"),
    ],
    current="compare",
    version=7,
)


def _rows() -> dict:
    return {row.id: row for row in plan_rows(PLAN)}


def test_each_mark_has_its_icon_and_the_unusual_ones_a_word():
    rows = _rows()
    assert {i: (r.mark, r.tag) for i, r in rows.items()} == {
        "whole-numbers": ("check", "check first"),
        "meaning": ("done", ""),
        "add": ("revisit", "to revisit"),
        "compare": ("current", ""),
        "tens": ("skipped", "not checked"),
        "mixed": ("todo", ""),  # a plain node: its check is unset, not None
    }
    assert set(MARKS) == {"done", "current", "revisit", "skipped", "check"}


def test_a_check_first_node_says_what_rests_on_it_and_why_it_is_weak():
    rows = _rows()
    assert rows["whole-numbers"].note == (
        "Needed for “Adding fractions” and “Comparing fractions”; it is fading in your graph."
    )
    assert rows["tens"].note == rows["whole-numbers"].note  # moved past: still says why
    assert rows["meaning"].note == rows["mixed"].note == ""
    assert rows["whole-numbers"].summary == ""  # the note says it, and more: not twice
    unknown = PrerequisiteCheck(node_id="x", reason="unseen", for_nodes=["gone"])
    alone = PlanTree(goal="g", nodes=[PlanNode(id="x", title="X", check=unknown)])
    assert plan_rows(alone)[0].note == "Later steps rest on this; no session has shown it yet."


def test_a_checked_prerequisite_reads_as_done():
    node = PlanNode(id="x", title="X", summary="Check first", status="done", check=CHECK)
    (row,) = plan_rows(PlanTree(goal="g", nodes=[node]))
    assert (row.mark, row.tag, row.note, row.summary) == ("done", "", "", "Check first")


def test_the_highlight_follows_the_trees_current_node_only():
    rows = _rows()
    assert [i for i, r in rows.items() if r.current] == ["compare"]
    # the teacher moved on from "add": it is marked to revisit, and not current
    assert not rows["add"].current and rows["add"].status == "revisit"
    moved = PlanTree(goal="g", nodes=PLAN.nodes, current="whole-numbers")
    current = [r for r in plan_rows(moved) if r.current]
    assert [(r.id, r.mark, r.tag) for r in current] == [("whole-numbers", "current", "check first")]


def test_the_panel_draws_the_icon_word_and_note():
    panel = str(plan_panel(PlanState.plan_goal, PlanState.plan))
    for icon in ("LucideRotateCcw", "LucideShieldQuestion", "LucideSkipForward"):
        assert icon in panel
    assert '"to revisit"' in panel and '"check first"' in panel  # label and its badge colour
    assert '"lh-plan-row lh-plan-"' in panel  # a class per mark (lh-plan-done, ...)
