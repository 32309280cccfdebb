"""The plan tree as the classroom's side panel shows it: depth-first rows with indents, the
current node (the tree's `current`), done nodes, and the learner model's marks: "to revisit"
(the teacher moved on before the learner showed it), "check first" (a weak prerequisite the
teacher should check; why, and what rests on it) and "skipped" (a check moved past)."""

from __future__ import annotations

import dataclasses

from shared_contracts.materials import Passage
from shared_contracts.plan import PlanNode, PlanTree, PrerequisiteCheck

RISK_WORDS = {
    "fading": "it is fading in your graph",
    "shaky": "it is shaky in your graph",
    "misconception": "your graph shows a mix-up about it",
    "unseen": "no session has shown it yet",
}
TAGS = {"revisit": "to revisit", "skipped": "not checked", "check": "check first"}
"""The word beside a row's title for each mark that has one (never colour alone)."""


@dataclasses.dataclass
class PlanRow:
    id: str = ""
    title: str = ""
    summary: str = ""
    depth: int = 0
    indent: str = "0px"
    status: str = "pending"
    done: bool = False
    current: bool = False
    mark: str = "todo"
    """Which icon the row gets: done, current, revisit, skipped, check or todo."""
    tag: str = ""
    """ "to revisit", "check first", "not checked" ("" for the plain rows)."""
    note: str = ""
    """Why a "check first" node is there: what rests on it and how it stands."""
    sources: str = ""
    """A node taught from the learner's material: "From pages 3, 4" ("" otherwise)."""


def _check(node: PlanNode) -> PrerequisiteCheck | None:
    """The node's prerequisite check (unset, not None, on every other node)."""
    return node.check if isinstance(node.check, PrerequisiteCheck) else None


def _mark(node: PlanNode, current: bool) -> str:
    if node.status in ("done", "revisit", "skipped"):
        return node.status
    if current:
        return "current"
    return "check" if _check(node) is not None else "todo"


def _tag(node: PlanNode) -> str:
    if node.status in ("revisit", "skipped"):
        return TAGS[node.status]
    return TAGS["check"] if _check(node) is not None and node.status != "done" else ""


def _check_note(node: PlanNode, titles: dict[str, str]) -> str:
    check = _check(node)
    if check is None or node.status == "done":
        return ""
    named = [f"“{titles[i]}”" for i in check.for_nodes if i in titles]
    if len(named) > 1:
        named = [", ".join(named[:-1]) + " and " + named[-1]]
    needed = f"Needed for {named[0]}" if named else "Later steps rest on this"
    return f"{needed}; {RISK_WORDS.get(check.reason, 'it is not solid yet')}."


def _row(node: PlanNode, depth: int, plan: PlanTree, titles: dict[str, str]) -> PlanRow:
    # the tree keeps at most one node active and it is `current`: the highlight follows it
    current = node.id == plan.current
    note = _check_note(node, titles)
    return PlanRow(
        id=node.id,
        title=node.title,
        # a check's note says what its summary says ("Check first: …") and what rests on it
        summary="" if note else node.summary,
        depth=depth,
        indent=f"{depth * 16}px",
        status=node.status,
        done=node.status == "done",
        current=current,
        mark=_mark(node, current),
        tag=_tag(node),
        note=note,
        sources=passage_pages(node.passages or []),
    )


def passage_pages(passages: list[Passage]) -> str:
    """ "From page 3" / "From pages 3, 4" for a node's document passages ("" for none)."""
    pages = sorted({p.page for p in passages})
    if not pages:
        return ""
    return ("From page " if len(pages) == 1 else "From pages ") + ", ".join(map(str, pages))


def plan_rows(plan: PlanTree | None) -> list[PlanRow]:
    """The plan tree flattened depth-first (parents before children), with indents."""
    if plan is None:
        return []
    known = {n.id for n in plan.nodes}
    titles = {n.id: n.title for n in plan.nodes}
    children: dict[str | None, list[PlanNode]] = {}
    for node in plan.nodes:
        parent = node.parent if node.parent in known else None
        children.setdefault(parent, []).append(node)
    rows: list[PlanRow] = []
    seen: set[str] = set()

    def walk(parent: str | None, depth: int) -> None:
        for node in children.get(parent, []):
            if node.id in seen:
                continue
            seen.add(node.id)
            rows.append(_row(node, depth, plan, titles))
            walk(node.id, depth + 1)

    walk(None, 0)
    return rows
