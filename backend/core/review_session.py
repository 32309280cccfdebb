"""What a review session's teacher gets, as a block of its instructions, and how it reads back.

A review chat (`ChatRecord.mode == "review"`) hands the teacher the first items of the
review queue (`review.review_brief`): nodes the teacher's plan left "to revisit" first, then
the queue's order. The block says how to probe them, in prose for a model, and carries the
items as one fenced JSON block (`BRIEF_FENCE`) that the offline tutor reads back with
`read_review_block` — one rendering, two readers.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import msgspec

from backend.core.review import BRIEF_PROBES, review_brief
from shared_contracts.graph import EventLine, GraphNode, GraphSnapshot
from shared_contracts.learner import ReviewBriefItem, ReviewQueue

BRIEF_FENCE = "json review-items"
BRIEF_ITEMS = 8
"""Items a review session takes: a short session, the most urgent first."""
REVISIT_DETAIL = "We moved on before you had shown this; let's try it again."
_ITEMS = msgspec.json.Decoder(list[ReviewBriefItem])
_ENCODER = msgspec.json.Encoder()

INSTRUCTIONS = """## This session is a review

The learner opened a review from home: these items of their knowledge graph are due. Do
not teach first: call `plan_init` with one node per item (the node's `id` is the item's
`node_id`, its title the statement), then probe each item in order with ONE `quiz` tagged
with `node_id` = the item's `node_id`, built from the questions that probed it before.
For a misconception, ask a multiple choice whose distractor states the wrong belief
(`wrong_belief`): a right answer, unaided and not a guess, in this later session resolves
it. A right answer → `plan_mark_done`; a wrong one → re-teach briefly (`plan_update` with
`"reteach": true`), ask once more, and if it is still wrong mark the node
`"status": "revisit"` and go on. Finish with a short recap of what held and what did not."""


def render_review_block(items: list[ReviewBriefItem]) -> str:
    """The review section of a review chat's teacher instructions."""
    if not items:
        return (
            "## This session is a review\n\nNothing is due for review right now: tell the "
            "learner so, and offer to start a lesson."
        )
    listed = "\n".join(
        f"{i}. [{x.reason}] {x.statement} — {x.detail}" for i, x in enumerate(items, 1)
    )
    payload = _ENCODER.encode(items).decode()
    return f"{INSTRUCTIONS}\n\n{listed}\n\n```{BRIEF_FENCE}\n{payload}\n```"


def read_review_block(text: str) -> list[ReviewBriefItem] | None:
    """The items of a review block in `text` (a system prompt); None when it has none (a
    lesson), [] for a review with nothing due. A block that does not decode is None."""
    start = text.find(f"```{BRIEF_FENCE}\n")
    if start < 0:
        return [] if "## This session is a review" in text else None
    body = text[start + len(BRIEF_FENCE) + 4 :]
    end = body.find("\n```")
    try:
        return _ITEMS.decode(body[:end] if end >= 0 else body)
    except msgspec.DecodeError:
        return None


def to_revisit(events: Iterable[EventLine]) -> set[str]:
    """Nodes the teacher left "to revisit" (a `marked_revisit` event) and the learner has
    not answered right since."""
    marked: dict[str, tuple[datetime, str]] = {}
    shown: dict[str, tuple[datetime, str]] = {}
    for event in events:
        node = event.node_id
        if node is None or event.kind not in ("marked_revisit", "quiz_correct"):
            continue
        latest = marked if event.kind == "marked_revisit" else shown
        moment = (event.at, event.ref)
        if node not in latest or latest[node] < moment:
            latest[node] = moment
    return {node for node, moment in marked.items() if node not in shown or shown[node] < moment}


def revisit_first(items: list[ReviewBriefItem], revisit: set[str]) -> list[ReviewBriefItem]:
    """`items` with those to revisit first (each group keeps its order)."""
    return [x for x in items if x.node_id in revisit] + [
        x for x in items if x.node_id not in revisit
    ]


def session_brief(
    snapshot: GraphSnapshot, queue: ReviewQueue, revisit: set[str], limit: int = BRIEF_ITEMS
) -> list[ReviewBriefItem]:
    """What a review session starting at the snapshot's moment probes: the nodes left to
    revisit first (in graph order, queued or not: right after the lesson they are seldom
    due yet), then the queue's order; the first `limit`."""
    brief = review_brief(snapshot, queue, limit=len(queue.items))
    briefed = {x.node_id for x in brief}
    extra = [
        _revisit_item(node)
        for node in snapshot.nodes
        if node.id in revisit and node.id not in briefed
    ]
    return revisit_first([*extra, *brief], revisit)[:limit]


def _revisit_item(node: GraphNode) -> ReviewBriefItem:
    return ReviewBriefItem(
        node_id=node.id,
        statement=node.statement,
        kind=node.kind,
        reason="misconception_open" if node.state == "misconception" else "due",
        detail=REVISIT_DETAIL,
        wrong_belief=node.statement if node.kind == "misconception" else "",
        probes=node.probes[-BRIEF_PROBES:],
    )
