"""The plan tree's operations: apply one plan tool call to a tree, or refuse with PlanError.

Invariants every returned tree keeps: node ids are unique, every parent exists, there
are no cycles, at most one node is `active` and it is `current`. A node is *open* while it
is `pending` or `active`; `done`, `revisit` (the teacher moved on before the learner showed
it) and `skipped` (a "check first" node moved past) close it, and focus moves on to the
next open node when the current one closes. Each change bumps
`version` by one; a call that changes nothing (marking a done node done again, an update
with the same values) returns the tree unchanged, version included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec
from msgspec.structs import replace

from backend.core.errors import PlanError
from shared_contracts.materials import Passage, PassageSpec
from shared_contracts.plan import PlanNode, PlanStatus, PlanTree
from shared_contracts.tools import (
    PlanAddArgs,
    PlanInitArgs,
    PlanMarkDoneArgs,
    PlanNodeSpec,
    PlanUpdateArgs,
)

PlanArgs = PlanInitArgs | PlanAddArgs | PlanUpdateArgs | PlanMarkDoneArgs
OPEN: frozenset[PlanStatus] = frozenset({"pending", "active"})


def apply_plan_tool(
    tree: PlanTree | None,
    args: PlanArgs,
    passages: Mapping[str, list[Passage]] | None = None,
) -> PlanTree:
    """Return the tree after `args`, or raise `PlanError` with a message the model can act on.
    `passages`: the checked passages of each new node (by id); a spec's own are never used
    unchecked (see `plan_passages`)."""
    checked = passages or {}
    if isinstance(args, PlanInitArgs):
        if tree is not None:
            raise PlanError(
                "a plan already exists; use plan_add to add nodes or plan_update to change one"
            )
        return _init(args, checked)
    if tree is None:
        raise PlanError("there is no plan yet; call plan_init first")
    check_tree(tree)
    if isinstance(args, PlanAddArgs):
        changed = _add(tree, args.node, checked)
    elif isinstance(args, PlanUpdateArgs):
        changed = _update(tree, args)
    elif isinstance(args, PlanMarkDoneArgs):
        changed = _mark_done(tree, args)
    else:  # a caller bug, but still a typed refusal rather than a traceback
        raise PlanError(f"not a plan tool: {type(args).__name__}")
    if changed == tree:
        return tree
    return replace(changed, version=tree.version + 1)


def depth_first(tree: PlanTree) -> list[PlanNode]:
    """Nodes in depth-first pre-order, roots and children in insertion order."""
    children: dict[str | None, list[PlanNode]] = {}
    for node in tree.nodes:
        children.setdefault(node.parent, []).append(node)
    order: list[PlanNode] = []
    seen: set[str] = set()
    stack = list(reversed(children.get(None, [])))
    while stack:
        node = stack.pop()
        if node.id in seen:  # only possible in a corrupt tree; never loop
            continue
        seen.add(node.id)
        order.append(node)
        stack.extend(reversed(children.get(node.id, [])))
    return order


def progress(tree: PlanTree) -> tuple[int, int]:
    """(nodes done, nodes in total)."""
    return sum(1 for n in tree.nodes if n.status == "done"), len(tree.nodes)


def check_tree(tree: PlanTree) -> None:
    """Raise `PlanError` if a stored tree breaks the invariants (duplicates, orphans, cycles)."""
    ids: set[str] = set()
    for node in tree.nodes:
        if node.id in ids:
            raise PlanError(f"the stored plan is inconsistent: duplicate node id {node.id!r}")
        ids.add(node.id)
    for node in tree.nodes:
        if node.parent is not None and node.parent not in ids:
            raise PlanError(
                f"the stored plan is inconsistent: node {node.id!r} has unknown parent "
                f"{node.parent!r}"
            )
    if len(depth_first(tree)) != len(tree.nodes):
        raise PlanError("the stored plan is inconsistent: its parent links form a cycle")
    if tree.current is not None and tree.current not in ids:
        raise PlanError(f"the stored plan is inconsistent: unknown current node {tree.current!r}")


def plan_passages(args: PlanArgs) -> list[tuple[str, list[PassageSpec]]]:
    """(node id, its passage specs) for each new node of `args` that cites any."""
    specs = (
        args.nodes
        if isinstance(args, PlanInitArgs)
        else [args.node]
        if isinstance(args, PlanAddArgs)
        else []
    )
    return [(spec.id, list(spec.passages)) for spec in specs if spec.passages]


def _init(args: PlanInitArgs, passages: Mapping[str, list[Passage]]) -> PlanTree:
    later = {spec.id for spec in args.nodes}
    seen: set[str] = set()
    nodes: list[PlanNode] = []
    for spec in args.nodes:
        if spec.id in seen:
            raise PlanError(
                f"duplicate node id {spec.id!r} in plan_init; give every node its own id"
            )
        if spec.parent == spec.id:
            raise PlanError(f"node {spec.id!r} cannot be its own parent")
        if spec.parent is not None and spec.parent not in seen:
            if spec.parent in later:
                raise PlanError(
                    f"node {spec.id!r} names parent {spec.parent!r}, which comes after it; "
                    "list parents before their children"
                )
            raise PlanError(
                f"node {spec.id!r} names unknown parent {spec.parent!r}; "
                f"known ids: {_ids_hint(seen)}"
            )
        seen.add(spec.id)
        nodes.append(_node(spec, passages))
    tree = PlanTree(goal=args.goal, nodes=nodes, version=1)
    first = depth_first(tree)[0].id
    return _focus(tree, first)


def _add(tree: PlanTree, spec: PlanNodeSpec, passages: Mapping[str, list[Passage]]) -> PlanTree:
    ids = {n.id for n in tree.nodes}
    if spec.id in ids:
        raise PlanError(
            f"a node with id {spec.id!r} already exists; choose a new id, "
            "or use plan_update to change it"
        )
    if spec.parent == spec.id:
        raise PlanError(f"node {spec.id!r} cannot be its own parent")
    if spec.parent is not None and spec.parent not in ids:
        raise PlanError(
            f"unknown parent {spec.parent!r}; use one of {_ids_hint(ids)} or omit parent"
        )
    grown = replace(tree, nodes=[*tree.nodes, _node(spec, passages)])
    if grown.current is None:  # everything was done: the new node is what comes next
        return _focus(grown, spec.id)
    return grown


def _update(tree: PlanTree, args: PlanUpdateArgs) -> PlanTree:
    node = _find(tree, args.id, "plan_update")
    changes: dict[str, str] = {}
    if args.title is not None:
        changes["title"] = args.title
    if args.summary is not None:
        changes["summary"] = args.summary
    tree = _with_node(tree, replace(node, **changes)) if changes else tree
    if args.status == "active":
        return _focus(tree, args.id)
    if args.status == "revisit":
        return close(tree, args.id, "revisit")
    if args.status == "pending":
        if tree.current == args.id:  # stepping away from the focused node
            tree = _focus(tree, _next_open(tree, after=args.id, exclude=args.id))
        return _with_node(tree, replace(_find(tree, args.id, "plan_update"), status="pending"))
    return tree


def _mark_done(tree: PlanTree, args: PlanMarkDoneArgs) -> PlanTree:
    node = _find(tree, args.id, "plan_mark_done")
    if node.status == "done":
        return tree
    return close(tree, args.id, "done", note=args.note)


def close(tree: PlanTree, node_id: str, status: PlanStatus, note: str = "") -> PlanTree:
    """`node_id` closed as `status` (`done`, `revisit` or `skipped`); when it was current
    (or nothing was), focus moves to the next open node. Unchanged if it already was."""
    node = _find(tree, node_id, f"plan {status}")
    if node.status == status:
        return tree
    changes = {"status": status, "done_note": note} if status == "done" else {"status": status}
    tree = _with_node(tree, replace(node, **changes))
    if tree.current in (None, node_id):
        return _focus(tree, _next_open(tree, after=node_id))
    return tree


def _focus(tree: PlanTree, node_id: str | None) -> PlanTree:
    """Make `node_id` the current, active node; the previous active node goes back to pending."""
    nodes = [
        replace(n, status="active")
        if n.id == node_id
        else replace(n, status="pending")
        if n.status == "active"
        else n
        for n in tree.nodes
    ]
    return replace(tree, nodes=nodes, current=node_id)


def _next_open(tree: PlanTree, after: str, exclude: str | None = None) -> str | None:
    """The first open node after `after` in depth-first order, wrapping to the start."""
    order = depth_first(tree)
    at = next(i for i, n in enumerate(order) if n.id == after)
    for node in order[at + 1 :] + order[: at + 1]:
        if node.status in OPEN and node.id != exclude:
            return node.id
    return None


def _find(tree: PlanTree, node_id: str, tool: str) -> PlanNode:
    for node in tree.nodes:
        if node.id == node_id:
            return node
    raise PlanError(
        f"{tool}: no node with id {node_id!r}; known ids: {_ids_hint(n.id for n in tree.nodes)}"
    )


def _with_node(tree: PlanTree, node: PlanNode) -> PlanTree:
    return replace(tree, nodes=[node if n.id == node.id else n for n in tree.nodes])


def _node(spec: PlanNodeSpec, passages: Mapping[str, list[Passage]]) -> PlanNode:
    return PlanNode(
        id=spec.id,
        title=spec.title,
        summary=spec.summary,
        parent=spec.parent,
        passages=list(passages.get(spec.id, [])) or msgspec.UNSET,
    )


def _ids_hint(ids: Iterable[str]) -> str:
    listed = sorted(ids)
    if not listed:
        return "(none)"
    shown = ", ".join(listed[:20])
    return shown + (f", … ({len(listed)} in all)" if len(listed) > 20 else "")
