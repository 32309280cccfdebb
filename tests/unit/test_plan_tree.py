"""Plan-tree operations: the happy path, every refusal, and random operation sequences."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from backend.core.errors import PlanError, ToolError
from backend.core.plan_tree import apply_plan_tool, check_tree, depth_first, progress
from shared_contracts.plan import PlanNode, PlanTree
from shared_contracts.tools import (
    AskUserArgs,
    PlanAddArgs,
    PlanInitArgs,
    PlanMarkDoneArgs,
    PlanNodeSpec,
    PlanUpdateArgs,
)


def spec(node_id: str, parent: str | None = None) -> PlanNodeSpec:
    return PlanNodeSpec(id=node_id, title=node_id.upper(), parent=parent)


def init(*nodes: PlanNodeSpec) -> PlanTree:
    return apply_plan_tool(None, PlanInitArgs(goal="learn", nodes=list(nodes)))


def statuses(tree: PlanTree) -> dict[str, str]:
    return {n.id: n.status for n in tree.nodes}


@pytest.fixture
def tree() -> PlanTree:
    # a ─┬─ a1
    #    └─ a2
    # b ─── b1
    return init(spec("a"), spec("a1", "a"), spec("b"), spec("a2", "a"), spec("b1", "b"))


def test_init_builds_the_tree_and_focuses_the_first_node(tree: PlanTree) -> None:
    assert tree.goal == "learn"
    assert tree.version == 1
    assert tree.current == "a"
    assert statuses(tree) == {
        "a": "active",
        "a1": "pending",
        "b": "pending",
        "a2": "pending",
        "b1": "pending",
    }
    assert [n.title for n in tree.nodes] == ["A", "A1", "B", "A2", "B1"]


def test_depth_first_visits_children_in_insertion_order(tree: PlanTree) -> None:
    assert [n.id for n in depth_first(tree)] == ["a", "a1", "a2", "b", "b1"]


def test_progress_counts_done_nodes(tree: PlanTree) -> None:
    assert progress(tree) == (0, 5)
    tree = apply_plan_tool(tree, PlanMarkDoneArgs(id="a1"))
    assert progress(tree) == (1, 5)


@pytest.mark.parametrize(
    "args",
    [
        PlanAddArgs(node=spec("x")),
        PlanUpdateArgs(id="a", title="t"),
        PlanMarkDoneArgs(id="a"),
    ],
)
def test_every_change_before_plan_init_is_refused(args: object) -> None:
    with pytest.raises(PlanError, match="plan_init"):
        apply_plan_tool(None, args)  # type: ignore[arg-type]


def test_plan_init_twice_points_to_add_and_update(tree: PlanTree) -> None:
    with pytest.raises(PlanError, match=r"plan_add.*plan_update"):
        apply_plan_tool(tree, PlanInitArgs(goal="again", nodes=[spec("z")]))


def test_a_non_plan_argument_is_refused(tree: PlanTree) -> None:
    with pytest.raises(PlanError, match="not a plan tool"):
        apply_plan_tool(tree, AskUserArgs(prompt="?"))  # type: ignore[arg-type]


def test_plan_errors_are_tool_errors() -> None:
    # the agent turns ToolError into a tool-error part the model sees
    assert issubclass(PlanError, ToolError)


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ([spec("a"), spec("a")], "duplicate node id 'a'"),
        ([spec("a"), spec("b", "nope")], "unknown parent 'nope'"),
        ([spec("b", "a"), spec("a")], "comes after it"),
        ([spec("a", "a")], "own parent"),
    ],
)
def test_plan_init_refuses_broken_trees(nodes: list[PlanNodeSpec], message: str) -> None:
    with pytest.raises(PlanError, match=message):
        init(*nodes)


def test_add_appends_a_pending_node_under_its_parent(tree: PlanTree) -> None:
    grown = apply_plan_tool(tree, PlanAddArgs(node=spec("a3", "a")))
    assert grown.version == tree.version + 1
    assert [n.id for n in depth_first(grown)] == ["a", "a1", "a2", "a3", "b", "b1"]
    assert statuses(grown)["a3"] == "pending"
    assert grown.current == "a"


def test_add_at_the_root(tree: PlanTree) -> None:
    grown = apply_plan_tool(tree, PlanAddArgs(node=spec("c")))
    assert [n.id for n in depth_first(grown)][-1] == "c"


def test_add_refuses_duplicates_and_unknown_parents(tree: PlanTree) -> None:
    with pytest.raises(PlanError, match=r"already exists.*plan_update"):
        apply_plan_tool(tree, PlanAddArgs(node=spec("a1", "b")))
    with pytest.raises(PlanError, match=r"unknown parent 'zz'.*a, a1, a2, b, b1"):
        apply_plan_tool(tree, PlanAddArgs(node=spec("c", "zz")))
    with pytest.raises(PlanError, match="own parent"):
        apply_plan_tool(tree, PlanAddArgs(node=spec("c", "c")))


def test_update_retitles_and_resummarises(tree: PlanTree) -> None:
    updated = apply_plan_tool(tree, PlanUpdateArgs(id="b1", title="New", summary="why"))
    node = next(n for n in updated.nodes if n.id == "b1")
    assert (node.title, node.summary) == ("New", "why")
    assert updated.version == tree.version + 1


def test_update_that_changes_nothing_keeps_the_version(tree: PlanTree) -> None:
    assert apply_plan_tool(tree, PlanUpdateArgs(id="a1")) is tree
    assert apply_plan_tool(tree, PlanUpdateArgs(id="a1", title="A1")) is tree
    assert apply_plan_tool(tree, PlanUpdateArgs(id="a", status="active")) is tree


def test_update_active_moves_focus_and_demotes_the_old_focus(tree: PlanTree) -> None:
    moved = apply_plan_tool(tree, PlanUpdateArgs(id="b", status="active"))
    assert moved.current == "b"
    assert statuses(moved)["a"] == "pending"
    assert statuses(moved)["b"] == "active"
    assert moved.version == tree.version + 1


def test_update_active_keeps_a_done_previous_focus_done(tree: PlanTree) -> None:
    tree = apply_plan_tool(tree, PlanUpdateArgs(id="a1", status="active"))
    tree = apply_plan_tool(tree, PlanMarkDoneArgs(id="a1"))  # focus moves on to a2
    tree = apply_plan_tool(tree, PlanUpdateArgs(id="b", status="active"))
    assert statuses(tree) == {
        "a": "pending",
        "a1": "done",
        "b": "active",
        "a2": "pending",
        "b1": "pending",
    }


def test_update_pending_on_the_focus_moves_focus_on(tree: PlanTree) -> None:
    stepped = apply_plan_tool(tree, PlanUpdateArgs(id="a", status="pending"))
    assert stepped.current == "a1"
    assert statuses(stepped)["a"] == "pending"
    assert statuses(stepped)["a1"] == "active"


def test_stepping_away_from_the_last_open_node_leaves_no_focus() -> None:
    tree = init(spec("a"), spec("b"))
    tree = apply_plan_tool(tree, PlanMarkDoneArgs(id="a"))
    stepped = apply_plan_tool(tree, PlanUpdateArgs(id="b", status="pending"))
    assert stepped.current is None
    assert statuses(stepped) == {"a": "done", "b": "pending"}


def test_update_pending_reopens_a_done_node(tree: PlanTree) -> None:
    tree = apply_plan_tool(tree, PlanMarkDoneArgs(id="b1"))
    reopened = apply_plan_tool(tree, PlanUpdateArgs(id="b1", status="pending"))
    assert statuses(reopened)["b1"] == "pending"
    assert progress(reopened) == (0, 5)


def test_update_and_mark_done_refuse_unknown_nodes(tree: PlanTree) -> None:
    with pytest.raises(PlanError, match=r"plan_update: no node with id 'q'"):
        apply_plan_tool(tree, PlanUpdateArgs(id="q", title="t"))
    with pytest.raises(PlanError, match=r"plan_mark_done: no node with id 'q'.*a1"):
        apply_plan_tool(tree, PlanMarkDoneArgs(id="q"))


def test_mark_done_records_the_note_and_moves_focus_depth_first(tree: PlanTree) -> None:
    done = apply_plan_tool(tree, PlanMarkDoneArgs(id="a", note="gets it"))
    node = next(n for n in done.nodes if n.id == "a")
    assert (node.status, node.done_note) == ("done", "gets it")
    assert done.current == "a1"
    assert statuses(done)["a1"] == "active"
    assert done.version == tree.version + 1


def test_mark_done_twice_is_idempotent(tree: PlanTree) -> None:
    once = apply_plan_tool(tree, PlanMarkDoneArgs(id="a", note="first"))
    twice = apply_plan_tool(once, PlanMarkDoneArgs(id="a", note="second"))
    assert twice is once
    assert twice.version == once.version


def test_mark_done_of_a_node_out_of_focus_keeps_the_focus(tree: PlanTree) -> None:
    done = apply_plan_tool(tree, PlanMarkDoneArgs(id="b1"))
    assert done.current == "a"


def test_marking_everything_done_clears_the_focus_and_adding_restores_it(tree: PlanTree) -> None:
    for node in depth_first(tree):
        tree = apply_plan_tool(tree, PlanMarkDoneArgs(id=node.id))
    assert tree.current is None
    assert progress(tree) == (5, 5)
    grown = apply_plan_tool(tree, PlanAddArgs(node=spec("c")))
    assert grown.current == "c"
    assert statuses(grown)["c"] == "active"


def test_revisit_closes_the_focus_and_moves_on(tree: PlanTree) -> None:
    """The learner did not show `a`; the teacher moves on: `a` is "to revisit", `a1` is
    current (the offline fractions lesson once kept teaching node 2 under node 1's focus)."""
    moved = apply_plan_tool(tree, PlanUpdateArgs(id="a", status="revisit"))
    assert statuses(moved)["a"] == "revisit"
    assert moved.current == "a1"
    assert statuses(moved)["a1"] == "active"
    assert progress(moved) == (0, 5)
    assert apply_plan_tool(moved, PlanUpdateArgs(id="a", status="revisit")) is moved


def test_focus_skips_nodes_to_revisit_and_a_revisit_node_can_be_taken_up_again() -> None:
    tree = init(spec("a"), spec("b"), spec("c"))
    tree = apply_plan_tool(tree, PlanUpdateArgs(id="b", status="revisit"))
    tree = apply_plan_tool(tree, PlanMarkDoneArgs(id="a"))
    assert tree.current == "c"
    tree = apply_plan_tool(tree, PlanMarkDoneArgs(id="c"))
    assert tree.current is None
    again = apply_plan_tool(tree, PlanUpdateArgs(id="b", status="active"))
    assert (again.current, statuses(again)["b"]) == ("b", "active")


def test_a_reteach_mark_changes_nothing_in_the_tree(tree: PlanTree) -> None:
    assert apply_plan_tool(tree, PlanUpdateArgs(id="a", reteach=True)) is tree


def test_focus_wraps_around_to_earlier_open_nodes(tree: PlanTree) -> None:
    tree = apply_plan_tool(tree, PlanUpdateArgs(id="b1", status="active"))
    tree = apply_plan_tool(tree, PlanMarkDoneArgs(id="b1"))
    assert tree.current == "a"


def test_a_corrupt_stored_tree_is_refused_not_looped_over() -> None:
    looped = PlanTree(
        goal="g",
        nodes=[PlanNode(id="a", title="A", parent="b"), PlanNode(id="b", title="B", parent="a")],
    )
    assert depth_first(looped) == []
    with pytest.raises(PlanError, match="cycle"):
        apply_plan_tool(looped, PlanMarkDoneArgs(id="a"))
    orphan = PlanTree(goal="g", nodes=[PlanNode(id="a", title="A", parent="gone")])
    with pytest.raises(PlanError, match="unknown parent 'gone'"):
        check_tree(orphan)
    twice = PlanTree(goal="g", nodes=[PlanNode(id="a", title="A"), PlanNode(id="a", title="B")])
    with pytest.raises(PlanError, match="duplicate"):
        check_tree(twice)


# ---- properties ---------------------------------------------------------------------------

IDS = st.sampled_from(["a", "b", "c", "d", "e", "f"])
PARENTS = st.none() | IDS
SPECS = st.builds(spec, IDS, PARENTS)
OPS = st.one_of(
    st.builds(
        lambda nodes: PlanInitArgs(goal="g", nodes=nodes), st.lists(SPECS, min_size=1, max_size=6)
    ),
    st.builds(lambda s: PlanAddArgs(node=s), SPECS),
    st.builds(
        lambda i, t, s: PlanUpdateArgs(id=i, title=t, status=s),
        IDS,
        st.none() | st.sampled_from(["T", "U"]),
        st.none() | st.sampled_from(["pending", "active", "revisit"]),
    ),
    st.builds(lambda i: PlanMarkDoneArgs(id=i, note="n"), IDS),
)


def assert_invariants(tree: PlanTree) -> None:
    ids = [n.id for n in tree.nodes]
    assert len(ids) == len(set(ids)), "duplicate ids"
    assert all(n.parent is None or n.parent in ids for n in tree.nodes), "orphan parent"
    assert len(depth_first(tree)) == len(ids), "unreachable node (cycle)"
    active = [n.id for n in tree.nodes if n.status == "active"]
    assert active == ([tree.current] if tree.current is not None else [])


@settings(max_examples=200, deadline=None)
@given(st.lists(OPS, max_size=25))
def test_random_operation_sequences_keep_the_invariants(ops: list[object]) -> None:
    tree: PlanTree | None = None
    for op in ops:
        try:
            after = apply_plan_tool(tree, op)  # type: ignore[arg-type]
        except PlanError:
            continue  # the only failure allowed; the tree stays as it was
        assert_invariants(after)
        if tree is not None:
            changed = replace(after, version=0) != replace(tree, version=0)
            assert after.version == tree.version + changed
        else:
            assert after.version == 1
        tree = after
