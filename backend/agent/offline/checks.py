"""The offline tutor's "check first" steps: before teaching a node, it probes each weak
prerequisite the server put in the plan for it (a node with a `PrerequisiteCheck`), when the
lesson library has a question for it (`Prerequisite.check`, found by the check node's title,
the prerequisite's statement): one quiz tagged with the check node's id; right → done, wrong
or unanswered → left to revisit, and the lesson goes on. A check with no question in the
library is left for the server to record as skipped when the lesson moves past it."""

from __future__ import annotations

from backend.agent.offline import phrases
from backend.agent.offline.lessons import Lesson, LessonNode
from backend.agent.offline.reading import Call
from shared_contracts.base import Inbound
from shared_contracts.plan import PlanNode, PrerequisiteCheck
from shared_contracts.questions import QuestionSpec
from shared_contracts.tools import (
    GradedOutput,
    PlanMarkDoneArgs,
    PlanOutput,
    PlanUpdateArgs,
    QuizArgs,
)

MAX_UNANSWERED = 3


def check_step(
    segment: list[Call], node: LessonNode, lessons: list[Lesson]
) -> tuple[str, list[tuple[str, Inbound]]] | None:
    """(text, calls) of the next step on the checks `node` rests on, or None when none is
    left to ask (or close)."""
    for check in _checks_for(segment, node.id):
        question = _question_for(check.title, lessons)
        if question is None or _closed(segment, check.id):
            continue
        grades = [_grade(c) for c in segment if c.name == "quiz" and c.node_id == check.id]
        if "right" in grades:
            done = PlanMarkDoneArgs(id=check.id, note="shown at the check")
            return phrases.check_right(check.title), [("plan_mark_done", done)]
        if "wrong" in grades or grades.count("none") >= MAX_UNANSWERED:
            revisit = PlanUpdateArgs(id=check.id, status="revisit")
            return phrases.check_wrong(check.title), [("plan_update", revisit)]
        quiz = QuizArgs(question=question, node_id=check.id)
        return phrases.check_lead(check.title), [("quiz", quiz)]
    return None


def _checks_for(segment: list[Call], node_id: str) -> list[PlanNode]:
    """The plan's "check first" nodes `node_id` rests on (from the latest plan result)."""
    for call in reversed(segment):
        outcome = call.outcome()
        if isinstance(outcome, PlanOutput):
            return [
                n
                for n in outcome.tree.nodes
                if isinstance(n.check, PrerequisiteCheck) and node_id in n.check.for_nodes
            ]
    return []


def _question_for(title: str, lessons: list[Lesson]) -> QuestionSpec | None:
    for lesson in lessons:
        for node in lesson.nodes:
            for pre in node.rests_on:
                if pre.statement == title and pre.check is not None:
                    return pre.check
    return None


def _closed(segment: list[Call], node_id: str) -> bool:
    return any(
        c.node_id == node_id
        and (
            c.name == "plan_mark_done"
            or (c.name == "plan_update" and c.args.get("status") == "revisit")
        )
        for c in segment
    )


def _grade(call: Call) -> str:
    outcome = call.outcome()
    if isinstance(outcome, GradedOutput):
        return "right" if outcome.verdict.correct else "wrong"
    return "none"
