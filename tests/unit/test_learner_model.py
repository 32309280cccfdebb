"""The learner model over ledger lines: the guessing rule, fading, misconceptions that
resolve and reopen, risk along `requires` edges, the review queue and the teacher's brief,
and the graph as of an earlier moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import count

import msgspec
import pytest

from backend.core.graph import GraphState, SnapshotDeriver, derive_snapshot, fold, fold_into
from backend.core.ports import LedgerBatch
from backend.core.review import prerequisite_risks, review_brief, review_queue
from shared_contracts.graph import (
    EdgeLine,
    EventLine,
    GraphNode,
    GraphSnapshot,
    MappingLine,
    NodeKind,
    PropositionLine,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)
SURE, FAIRLY, GUESSING = 0.9, 0.6, 0.25
_refs = count()


def node(node_id: str, *, kind: NodeKind = "proposition", chat: str = "c1", at=T0):
    return PropositionLine(
        id=node_id, statement=f"statement of {node_id}", kind=kind, chat_id=chat, created_at=at
    )


def probe(
    node_id: str,
    correct: bool,
    at: datetime,
    *,
    chat: str = "c1",
    confidence: float | None = None,
    turn: int | msgspec.UnsetType = msgspec.UNSET,
    answer: str = "",
) -> EventLine:
    n = next(_refs)
    return EventLine(
        id=f"ev{n}",
        ref=f"{chat}:call_{n}",
        chat_id=chat,
        node_id=node_id,
        kind="quiz_correct" if correct else "quiz_incorrect",
        at=at,
        tool_call_id=f"call_{n}",
        question=f"question {n} on {node_id}",
        answer=answer or ("right" if correct else "wrong"),
        expected="right",
        correct=correct,
        confidence=confidence,
        turn=turn,
    )


def taught(node_id: str, at: datetime, *, chat: str, turn: int | msgspec.UnsetType = msgspec.UNSET):
    n = next(_refs)
    return EventLine(
        id=f"ev{n}",
        ref=f"{chat}:teach_{n}",
        chat_id=chat,
        node_id=node_id,
        kind="taught",
        at=at,
        turn=turn,
    )


def requires(dependent: str, prerequisite: str) -> EdgeLine:
    return EdgeLine(
        id=f"e-{dependent}-{prerequisite}",
        from_=dependent,
        to=prerequisite,
        type="requires",
        chat_id="c1",
        created_at=T0,
    )


def snapshot(as_of: datetime | None, *batches: LedgerBatch) -> GraphSnapshot:
    state = GraphState()
    for batch in batches:
        state = fold(state, batch)
    return derive_snapshot(state, as_of)


def by_id(snap: GraphSnapshot) -> dict[str, GraphNode]:
    return {n.id: n for n in snap.nodes}


def states(snap: GraphSnapshot) -> dict[str, str]:
    return {n.id: n.state for n in snap.nodes}


# --- a right guess is weak evidence ------------------------------------------------------


def test_a_right_guess_alone_never_verifies() -> None:
    lines = LedgerBatch(
        propositions=[node("once"), node("twice"), node("then_sure"), node("sure_then")],
        events=[
            probe("once", True, T0, confidence=GUESSING),
            probe("twice", True, T0, confidence=GUESSING),
            probe("twice", True, T0 + DAY, confidence=GUESSING),
            probe("then_sure", True, T0, confidence=GUESSING),
            probe("then_sure", True, T0 + DAY, confidence=SURE),
            probe("sure_then", True, T0, confidence=SURE),
            probe("sure_then", True, T0 + DAY, confidence=GUESSING),
        ],
    )
    assert states(snapshot(T0 + DAY, lines)) == {
        "once": "introduced",
        "twice": "introduced",
        "then_sure": "verified",
        "sure_then": "verified",
    }


# --- memory and fading -------------------------------------------------------------------


def test_a_verified_node_fades_once_recall_drops_below_the_desired_retention() -> None:
    lines = LedgerBatch(
        propositions=[node("p")],
        events=[probe("p", True, T0), probe("p", True, T0 + timedelta(minutes=5))],
    )
    soon = by_id(snapshot(T0 + DAY, lines))["p"]
    assert soon.state == "verified" and soon.memory is not None
    assert soon.memory.reviews == 2 and soon.memory.last_review == T0 + timedelta(minutes=5)
    assert soon.memory.retrievability is not None and soon.memory.retrievability > 0.9
    later = by_id(snapshot(soon.memory.due + 2 * DAY, lines))["p"]
    assert later.state == "fading"
    assert later.memory is not None and later.memory.retrievability is not None
    assert later.memory.retrievability < 0.9
    timeless = by_id(snapshot(None, lines))["p"]
    assert timeless.state == "verified" and timeless.memory is not None
    assert timeless.memory.retrievability is None


def test_a_node_never_probed_has_no_memory() -> None:
    assert by_id(snapshot(T0, LedgerBatch(propositions=[node("p")])))["p"].memory is None


# --- misconceptions resolve and reopen -----------------------------------------------------


def misconception() -> LedgerBatch:
    return LedgerBatch(propositions=[node("m", kind="misconception", chat="c1", at=T0)])


def test_a_misconception_resolves_on_an_unaided_right_answer_in_a_later_session() -> None:
    same_chat = LedgerBatch(events=[probe("m", True, T0 + DAY, chat="c1", confidence=SURE)])
    assert states(snapshot(T0 + 2 * DAY, misconception(), same_chat)) == {"m": "misconception"}

    later = probe("m", True, T0 + 3 * DAY, chat="c2", confidence=FAIRLY)
    resolved = by_id(snapshot(T0 + 4 * DAY, misconception(), LedgerBatch(events=[later])))["m"]
    assert resolved.state == "resolved"
    assert resolved.resolution is not None
    assert (resolved.resolution.at, resolved.resolution.chat_id) == (later.at, "c2")
    assert resolved.resolution.question == later.question
    assert resolved.resolution.tool_call_id == later.tool_call_id

    # Before that answer, it was open: time travel shows it so.
    before = by_id(snapshot(T0 + 2 * DAY, misconception(), LedgerBatch(events=[later])))["m"]
    assert before.state == "misconception" and before.resolution is None
    # A snapshot of no moment (what readers that predate the learner model get) never
    # shows the new states.
    timeless = by_id(snapshot(None, misconception(), LedgerBatch(events=[later])))["m"]
    assert (timeless.state, timeless.resolution) == ("misconception", None)


def test_a_resolved_misconception_reopens_on_a_wrong_answer_and_resolves_again_later() -> None:
    events = [
        probe("m", True, T0 + DAY, chat="c2"),
        probe("m", False, T0 + 5 * DAY, chat="c3", confidence=SURE),
    ]
    reopened = by_id(snapshot(T0 + 6 * DAY, misconception(), LedgerBatch(events=events)))["m"]
    assert (reopened.state, reopened.resolution) == ("misconception", None)
    # The chat that showed it again cannot resolve it; a later one can.
    events += [
        probe("m", True, T0 + 5 * DAY + timedelta(minutes=3), chat="c3"),
        probe("m", True, T0 + 9 * DAY, chat="c4"),
    ]
    again = by_id(snapshot(T0 + 10 * DAY, misconception(), LedgerBatch(events=events)))["m"]
    assert again.state == "resolved"
    assert again.resolution is not None and again.resolution.chat_id == "c4"


def test_a_guessed_or_retaught_right_answer_does_not_resolve() -> None:
    guessed = probe("m", True, T0 + DAY, chat="c2", confidence=GUESSING)
    retaught = [
        taught("m", T0 + 2 * DAY, chat="c3", turn=4),
        probe("m", True, T0 + 2 * DAY + timedelta(minutes=1), chat="c3", turn=4),
    ]
    taught_in_an_unknown_turn = [
        taught("m", T0 + 3 * DAY, chat="c4"),
        probe("m", True, T0 + 3 * DAY + timedelta(minutes=1), chat="c4", turn=2),
    ]
    lines = LedgerBatch(events=[guessed, *retaught, *taught_in_an_unknown_turn])
    assert states(snapshot(T0 + 4 * DAY, misconception(), lines)) == {"m": "misconception"}
    # Taught in an earlier turn of the chat, then probed unaided: resolved.
    unaided = [
        taught("m", T0 + 5 * DAY, chat="c5", turn=1),
        probe("m", True, T0 + 5 * DAY + timedelta(hours=1), chat="c5", turn=3),
    ]
    lines = LedgerBatch(events=[*lines.events, *unaided])
    resolved = by_id(snapshot(T0 + 6 * DAY, misconception(), lines))["m"]
    assert resolved.resolution is not None and resolved.resolution.chat_id == "c5"


def test_resolution_is_incremental_as_taught_events_arrive_after_the_probe() -> None:
    state, deriver = GraphState(), SnapshotDeriver()
    right = probe("m", True, T0 + DAY, chat="c2", turn=2)
    deriver.apply(state, fold_into(state, misconception()))
    deriver.apply(state, fold_into(state, LedgerBatch(events=[right])))
    assert states(deriver.snapshot(state, T0 + 2 * DAY)) == {"m": "resolved"}
    lesson = taught("m", T0 + DAY - timedelta(minutes=1), chat="c2", turn=2)
    deriver.apply(state, fold_into(state, LedgerBatch(events=[lesson])))
    assert states(deriver.snapshot(state, T0 + 2 * DAY)) == {"m": "misconception"}


# --- risk ----------------------------------------------------------------------------------


def risky_graph() -> LedgerBatch:
    return LedgerBatch(
        propositions=[
            node("goal"),
            node("solid"),
            node("shaky"),
            node("unseen"),
            node("belief", kind="misconception"),
            node("other"),
        ],
        edges=[
            requires("goal", "solid"),
            requires("goal", "shaky"),
            requires("goal", "unseen"),
            requires("other", "unseen"),
            requires("other", "belief"),
            EdgeLine(
                id="s", from_="goal", to="shaky", type="supports", chat_id="c1", created_at=T0
            ),
        ],
        mappings=[
            MappingLine(
                chat_id="c1",
                local_id="plan:unseen",
                node_id="unseen",
                how="created",
                at=T0,
                prerequisite=True,
            )
        ],
        events=[
            probe("solid", True, T0, confidence=SURE),
            probe("shaky", False, T0),
        ],
    )


def test_a_node_whose_prerequisite_is_weak_is_at_risk_and_says_why() -> None:
    risks = prerequisite_risks(snapshot(T0 + timedelta(hours=1), risky_graph()))
    assert {k: [(r.node_id, r.reason) for r in v] for k, v in risks.items()} == {
        "goal": [("shaky", "shaky"), ("unseen", "unseen")],
        "other": [("unseen", "unseen"), ("belief", "misconception")],
    }


# --- the review queue ----------------------------------------------------------------------


def queue_graph() -> LedgerBatch:
    lines = risky_graph()
    lines.propositions.extend(
        [node("slip"), node("old"), node("fresh"), node("m2", kind="misconception")]
    )
    lines.events.extend(
        [
            probe("belief", False, T0 + DAY, chat="c2", confidence=SURE, answer="3/4"),
            probe("slip", True, T0, confidence=SURE),
            probe("slip", False, T0 + 2 * DAY, confidence=SURE, answer="7"),
            probe("old", True, T0 - 60 * DAY, confidence=FAIRLY),
            probe("old", True, T0 - 60 * DAY + timedelta(minutes=2), confidence=FAIRLY),
            probe("fresh", True, T0 + 2 * DAY, confidence=SURE),
        ]
    )
    return lines


def test_the_queue_ranks_confidently_wrong_then_misconceptions_then_due_then_prerequisites():
    as_of = T0 + 3 * DAY
    snap = snapshot(as_of, queue_graph())
    queue = review_queue(snap)
    assert queue.as_of == as_of
    got = [(i.priority, i.node_id, i.reason) for i in queue.items]
    assert got == [
        (1, "slip", "confidently_wrong"),  # the newest confidently wrong answer first
        (2, "belief", "confidently_wrong"),
        (3, "m2", "misconception_open"),
        (4, "old", "due"),  # lowest retrievability first
        (5, "shaky", "due"),
        (6, "unseen", "prerequisite_at_risk"),  # two nodes require it
    ]
    items = {i.node_id: i for i in queue.items}
    assert (
        items["slip"].detail == "You said you were sure, and answered “7”; the answer was “right”."
    )
    assert items["belief"].detail.startswith("You said you were sure, and answered “3/4”")
    assert items["m2"].detail == "A mix-up to clear up: statement of m2."
    assert items["old"].detail == (
        f"You knew this 2 months ago; you'd now recall it about "
        f"{items['old'].retrievability:.0%} of the time."
    )
    assert items["shaky"].detail.startswith("Your last answer, 3 days ago, was wrong;")
    assert items["unseen"].detail == (
        "“statement of goal” and 1 more build on this, and you have not shown it yet."
    )
    assert items["unseen"].retrievability is None and items["unseen"].due is None
    old = by_id(snap)["old"]
    assert old.memory is not None
    assert (items["old"].retrievability, items["old"].due) == (
        old.memory.retrievability,
        old.memory.due,
    )
    assert (items["old"].state, items["old"].kind) == ("fading", "proposition")
    assert "fresh" not in items and "solid" not in items


def test_a_shaky_prerequisite_not_yet_due_is_queued_for_what_requires_it() -> None:
    snap = snapshot(T0 + timedelta(hours=2), risky_graph())
    items = {i.node_id: i for i in review_queue(snap).items}
    assert items["shaky"].reason == "prerequisite_at_risk"
    assert items["shaky"].detail == (
        "“statement of goal” builds on this, and your last answer on it was wrong."
    )
    assert items["belief"].reason == "misconception_open"


def test_limit_keeps_the_most_urgent_items_and_total_counts_them_all() -> None:
    snap = snapshot(T0 + 3 * DAY, queue_graph())
    full = review_queue(snap, limit=None)
    assert full.total == len(full.items) == 6
    two = review_queue(snap, limit=2)
    assert (two.items, two.total) == (full.items[:2], 6)


def test_the_queue_needs_a_moment() -> None:
    with pytest.raises(ValueError, match="moment"):
        review_queue(snapshot(None, queue_graph()))


def test_the_teacher_brief_carries_the_probing_questions_and_the_wrong_belief() -> None:
    snap = snapshot(T0 + 3 * DAY, queue_graph())
    queue = review_queue(snap)
    brief = review_brief(snap, queue, limit=3)
    assert [b.node_id for b in brief] == ["slip", "belief", "m2"]
    slip, belief, _ = brief
    assert [p.answer for p in slip.probes] == ["right", "7"] and slip.wrong_belief == ""
    assert belief.wrong_belief == "statement of belief"
    assert belief.detail == queue.items[1].detail and belief.reason == "confidently_wrong"


# --- time travel ---------------------------------------------------------------------------


def test_as_of_an_earlier_moment_shows_the_graph_as_it_was() -> None:
    first = LedgerBatch(propositions=[node("a", at=T0)], events=[probe("a", True, T0)])
    second = LedgerBatch(
        propositions=[node("b", at=T0 + 10 * DAY)],
        events=[probe("a", False, T0 + 10 * DAY), probe("b", True, T0 + 10 * DAY)],
        edges=[
            EdgeLine(
                id="e",
                from_="b",
                to="a",
                type="requires",
                chat_id="c2",
                created_at=T0 + 10 * DAY,
            )
        ],
    )
    state, deriver = GraphState(), SnapshotDeriver()
    for batch in (first, second):
        deriver.apply(state, fold_into(state, batch))
    now = deriver.snapshot(state, T0 + 11 * DAY)
    assert states(now) == {"a": "shaky", "b": "verified"} and len(now.edges) == 1
    then = deriver.snapshot(state, T0 + DAY)
    assert states(then) == {"a": "verified"} and then.edges == [] and then.as_of == T0 + DAY
    assert then.stats.events == 1
    # and back to now: the incremental snapshot is unchanged by the trip
    assert deriver.snapshot(state, T0 + 11 * DAY) == now
