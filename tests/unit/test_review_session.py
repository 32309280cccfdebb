"""What a review session's teacher gets: the block in its instructions (and the offline
tutor reading it back), and the nodes left "to revisit" coming first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from backend.core.graph import GraphState, derive_snapshot, fold
from backend.core.review import review_queue
from backend.core.review_session import (
    REVISIT_DETAIL,
    read_review_block,
    render_review_block,
    revisit_first,
    session_brief,
    to_revisit,
)
from shared_contracts.graph import EventKind, EventLine, Probe
from shared_contracts.learner import ReviewBriefItem
from tests.server.learner_graph import HOUR, batch
from tests.server.learner_graph import T0 as LESSON_DAY

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def item(node_id: str, kind: str = "proposition") -> ReviewBriefItem:
    return ReviewBriefItem(
        node_id=node_id,
        statement=f"statement of {node_id}",
        kind=kind,  # type: ignore[arg-type]
        reason="due" if kind == "proposition" else "misconception_open",
        detail="You knew this 3 weeks ago.",
        wrong_belief="thinks x" if kind == "misconception" else "",
        probes=[
            Probe(
                at=T0,
                chat_id="c1",
                question="What is the bottom number called?",
                answer="numerator",
                expected="denominator",
                correct=False,
            )
        ],
    )


def test_the_block_reads_back_as_the_items_it_carries() -> None:
    items = [item("n1"), item("n2", "misconception")]
    block = render_review_block(items)
    assert "1. [due] statement of n1" in block and "quiz" in block
    prompt = f"You teach.\n\n{block}\n\n## What this learner already knows\n\n- x"
    assert read_review_block(prompt) == items


def test_a_lesson_has_no_block_and_an_empty_review_says_nothing_is_due() -> None:
    assert read_review_block("You teach.\n\n## What this learner already knows\n") is None
    empty = render_review_block([])
    assert "Nothing is due" in empty
    assert read_review_block(empty) == []
    assert (
        read_review_block("## This session is a review\n```json review-items\n{oops\n```") is None
    )


def event(ref: str, kind: EventKind, node: str, minutes: int) -> EventLine:
    return EventLine(
        id=ref, ref=ref, chat_id="c1", node_id=node, kind=kind, at=T0 + timedelta(minutes=minutes)
    )


def test_nodes_left_to_revisit_come_first_until_answered_right() -> None:
    events = [
        event("e1", "quiz_incorrect", "n2", 1),
        event("e2", "marked_revisit", "n2", 2),
        event("e3", "marked_revisit", "n3", 2),
        event("e4", "quiz_correct", "n3", 5),  # shown since: no longer to revisit
        event("e5", "quiz_correct", "n4", 1),
        event("e6", "marked_revisit", "n4", 3),  # an older right answer does not count
    ]
    assert to_revisit(events) == {"n2", "n4"}
    items = [item("n1"), item("n2"), item("n3"), item("n4")]
    assert [x.node_id for x in revisit_first(items, {"n2", "n4"})] == ["n2", "n4", "n1", "n3"]


def test_a_review_takes_nodes_left_to_revisit_first_even_before_they_are_due() -> None:
    ledger = batch()
    ledger.events.append(
        EventLine(
            id="ev-r",
            ref="c1:call_9:marked_revisit",
            chat_id="c1",
            node_id="p-sum",
            kind="marked_revisit",
            at=LESSON_DAY + 3 * HOUR,
        )
    )
    state = fold(GraphState(), ledger)
    next_day = derive_snapshot(state, LESSON_DAY + timedelta(days=1))
    queue = review_queue(next_day)
    assert "p-sum" not in {x.node_id for x in queue.items}  # answered yesterday: not due
    brief = session_brief(next_day, queue, to_revisit(state.events.values()))
    assert [x.node_id for x in brief] == ["p-sum", "p-den", "m-sum"]
    assert brief[0].detail == REVISIT_DETAIL and brief[0].probes[-1].correct is False
    assert brief[2].wrong_belief == "thinks you add the denominators too"
    assert len(session_brief(next_day, queue, set(), limit=1)) == 1
