"""A wrong answer is not a misconception (issue 19 item 5), through the offline pipeline.

Chats built from the real fractions lesson: a misconception is made only when an answer
gives the lesson question's named belief, stated as the belief; re-extraction and a later
chat showing it again keep one node (each showing a probe of it); a later chat's
discriminating probe answered right, unaided and not guessed resolves it; re-taught, or
guessed, it does not. Events carry their turn; a re-teach is a `taught` event.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from backend.agent.extraction.offline import OfflineAuditor, OfflineExtractor
from backend.agent.extraction.pipeline import create_extraction_pipeline
from backend.agent.offline.lessons import load_lessons
from backend.core.graph import GraphState, derive_snapshot, fold
from shared_contracts.chat import ChatRecord, Message, ToolPart
from shared_contracts.graph import GraphNode, GraphSnapshot
from shared_contracts.plan import PlanNode, PlanTree
from shared_contracts.questions import Verdict
from shared_contracts.tools import GradedOutput, PlanOutput
from tests.fakes import FixedClock, MemoryChatStore, MemoryGraphStore, SequentialIds

LESSON = next(x for x in load_lessons() if x.id == "fractions")
MEANING, SCALE = LESSON.nodes[0], LESSON.nodes[1]
BELIEF = "thinks the bottom number of a fraction is called the numerator"
DAY0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PLAN = PlanTree(
    goal=LESSON.goal,
    nodes=[
        PlanNode(id=n.id, title=n.title, summary=n.summary, parent=n.parent) for n in LESSON.nodes
    ],
)


def quiz(call: str, prompt: str, answer: str, correct: bool, node: str, **extra: Any) -> ToolPart:
    question = extra.pop("question", {"kind": "short_answer", "prompt": prompt, "accepted": ["x"]})
    return ToolPart(
        tool_call_id=call,
        tool_name="quiz",
        state="output-available",
        input={"question": question, "node_id": node},
        output=GradedOutput(
            answer=answer,
            confidence=extra.get("confidence", 0.6),
            verdict=Verdict(correct=correct, expected="denominator", given=answer),
        ),
    )


def reteach(call: str, node: str) -> ToolPart:
    return ToolPart(
        tool_call_id=call,
        tool_name="plan_update",
        state="output-available",
        input={"id": node, "reteach": True},
        output=PlanOutput(tree=PLAN),
    )


def record(
    chat_id: str, day: float, turns: list[list[ToolPart]], mode: str = "lesson"
) -> ChatRecord:
    """One assistant message per turn (turn numbers 2, 4, ...), each holding its parts."""
    at = DAY0 + timedelta(days=day)
    messages = [
        Message(
            id=f"{chat_id}-m{i}",
            role="assistant",
            turn=2 * i + 2,
            created_at=at + timedelta(minutes=i),
            parts=list(parts),
        )
        for i, parts in enumerate(turns)
    ]
    return ChatRecord(
        id=chat_id,
        title=chat_id,
        created_at=at,
        updated_at=at,
        messages=messages,
        plan=PLAN if mode == "lesson" else None,
        mode=mode,  # type: ignore[arg-type]
    )


async def extracted(*records: ChatRecord) -> tuple[MemoryGraphStore, GraphSnapshot]:
    chats, graph = MemoryChatStore(), MemoryGraphStore()
    pipeline = create_extraction_pipeline(
        chats,
        graph,
        OfflineExtractor(),
        OfflineAuditor(),
        clock=FixedClock(DAY0),
        ids=SequentialIds(),
    )
    for rec in records:
        await chats.create(rec)
        await pipeline.run(rec.id)
        assert (await pipeline.run(rec.id)).nothing_to_do  # re-running adds nothing
    state = fold(GraphState(), graph.batch)
    return graph, derive_snapshot(state, DAY0 + timedelta(days=60))


def misconceptions(snapshot: GraphSnapshot) -> list[GraphNode]:
    return [n for n in snapshot.nodes if n.kind == "misconception"]


def lesson_chat(chat_id: str = "c1", day: float = 0.0) -> ChatRecord:
    """The belief shown, re-taught, then answered right; a slip twice on node 2."""
    return record(
        chat_id,
        day,
        [
            [quiz(f"{chat_id}-q1", MEANING.quiz.prompt, "numerator", False, MEANING.id)],
            [
                reteach(f"{chat_id}-r1", MEANING.id),
                quiz(f"{chat_id}-q2", MEANING.quiz.prompt, "denominator", True, MEANING.id),
            ],
            [quiz(f"{chat_id}-q3", SCALE.quiz.prompt, "15", False, SCALE.id)],
            [quiz(f"{chat_id}-q4", SCALE.quiz.prompt, "15", False, SCALE.id)],
        ],
    )


async def test_only_the_named_belief_makes_a_misconception_stated_as_the_belief() -> None:
    _, snapshot = await extracted(lesson_chat())
    (belief,) = misconceptions(snapshot)
    assert belief.statement == BELIEF
    assert [p.answer for p in belief.probes] == ["numerator"]  # the answer that showed it
    assert belief.state == "misconception"
    # The same wrong number twice is a slip or a guess the library names no belief for:
    # shaky evidence on its node, no misconception (it once made "thinks “15” is …").
    scale = next(n for n in snapshot.nodes if n.statement.startswith(SCALE.title))
    assert (scale.state, scale.incorrect) == ("shaky", 2)
    assert not any("15" in n.statement for n in snapshot.nodes)


async def test_events_carry_their_turn_and_a_reteach_is_a_taught_event() -> None:
    graph, _ = await extracted(lesson_chat())
    by_ref = {e.ref: e for e in graph.batch.events}
    assert by_ref["c1:c1-q1"].turn == 2 and by_ref["c1:c1-q2"].turn == 4
    taught = by_ref["c1:c1-r1:taught"]
    assert (taught.kind, taught.turn, taught.node_id) == ("taught", 4, by_ref["c1:c1-q2"].node_id)


async def test_showing_the_belief_again_in_a_later_chat_keeps_one_node() -> None:
    _, snapshot = await extracted(lesson_chat("c1", 0), lesson_chat("c2", 3))
    (belief,) = misconceptions(snapshot)
    assert [p.chat_id for p in belief.probes] == ["c1", "c2"]
    assert belief.sessions == ["c1", "c2"]


def review(
    chat_id: str, day: float, node_id: str, *, confidence: float = 0.9, retaught: bool = False
) -> ChatRecord:
    """A review chat probing the misconception node by its graph id with a discriminating
    multiple choice (its distractor the belief), answered right."""
    question = {
        "kind": "multiple_choice",
        "prompt": MEANING.quiz.prompt,
        "options": [{"id": "a", "text": "numerator"}, {"id": "b", "text": "denominator"}],
        "correct": "b",
    }
    parts = [
        quiz(
            f"{chat_id}-q1",
            MEANING.quiz.prompt,
            "denominator",
            True,
            node_id,
            question=question,
            confidence=confidence,
        )
    ]
    if retaught:
        parts.insert(0, reteach(f"{chat_id}-r1", node_id))
    return record(chat_id, day, [parts], mode="review")


async def test_a_later_discriminating_probe_answered_right_unaided_resolves_it() -> None:
    _, before = await extracted(lesson_chat())
    node_id = misconceptions(before)[0].id
    graph, snapshot = await extracted(lesson_chat(), review("c9", 7, node_id))
    (belief,) = misconceptions(snapshot)
    assert belief.state == "resolved"
    assert belief.resolution is not None and belief.resolution.chat_id == "c9"
    assert belief.resolution.question == MEANING.quiz.prompt
    # A review teaches nothing new: no proposition from its plan-less probes.
    assert len(snapshot.nodes) == len(before.nodes)
    # The discriminating probe lands on the node once (tag), not again as a showing.
    assert [e.ref for e in graph.batch.events if e.chat_id == "c9"] == ["c9:c9-q1"]


async def test_a_retaught_or_guessed_right_answer_does_not_resolve_it() -> None:
    _, before = await extracted(lesson_chat())
    node_id = misconceptions(before)[0].id
    _, retaught = await extracted(lesson_chat(), review("c9", 7, node_id, retaught=True))
    assert misconceptions(retaught)[0].state == "misconception"
    _, guessed = await extracted(lesson_chat(), review("c9", 7, node_id, confidence=0.25))
    assert misconceptions(guessed)[0].state == "misconception"


async def test_showing_it_again_after_resolution_reopens_it() -> None:
    _, before = await extracted(lesson_chat())
    node_id = misconceptions(before)[0].id
    _, snapshot = await extracted(
        lesson_chat("c1", 0), review("c9", 7, node_id), lesson_chat("c2", 14)
    )
    (belief,) = misconceptions(snapshot)
    assert belief.state == "misconception" and belief.resolution is None
