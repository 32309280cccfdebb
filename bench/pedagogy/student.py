"""The simulated learner in a session: simulated time, what it read, what it answered.

Time is in days since the bench's day 0 (`DAY0`, 09:00 UTC); each answer takes `STEP`.
Every answer is recorded (`AnswerRecord`) with why it was given, so the scores can tell a
misconception's answer from a guess, and a right answer from a lucky one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.pedagogy.learner import LEVELS, Reply, SimLearner
from bench.pedagogy.world import Concept, World, choice_for, is_lesson_question

DAY0 = datetime(2031, 1, 6, 9, 0, tzinfo=UTC)
STEP = 2 / (24 * 60)
"""Two minutes per answer."""
GUESSING = LEVELS[0]


def moment(at: float) -> datetime:
    return DAY0 + timedelta(days=at)


@dataclass(frozen=True)
class AnswerRecord:
    at: float
    session: int
    review: bool
    concept: str | None
    mode: str
    correct: bool
    confidence: float | None
    shows_belief: bool
    first_in_session: bool
    node_id: str | None = None
    """The graph node the question was tagged with (a review's questions are)."""


@dataclass
class SimStudent:
    """`session.Student` for a `SimLearner` in one session (index `session`)."""

    learner: SimLearner
    at: float
    session: int
    review: bool = False
    chat_id: str = ""
    records: list[AnswerRecord] = field(default_factory=list)
    taught: list[tuple[str, str]] = field(default_factory=list)
    """(concept, "teach" | "reteach") for each lesson text read."""
    _pending: tuple[Reply, dict[str, Any]] | None = None

    @property
    def world(self) -> World:
        return self.learner.world

    def read(self, text: str) -> None:
        for concept, how in self.world.taught(text):
            self.taught.append((concept.id, how))
            self.learner.taught(concept.id, how, self.at)

    def answer(self, frame: dict[str, Any]) -> tuple[Any, float | None]:
        question = frame.get("question", {})
        if question.get("kind") == "ask_user":
            return self.learner.ask_user(question), None
        self.at += STEP
        reply = self.learner.answer(question, self.at)
        self._pending = (reply, question)
        return reply.value, reply.confidence

    def verdict(self, frame: dict[str, Any]) -> None:
        if self._pending is None:
            return
        (reply, question), self._pending = self._pending, None
        correct = bool(frame.get("correct"))
        self.learner.graded(reply, correct, self.at)
        node_id = question.get("node_id")
        self.records.append(
            AnswerRecord(
                at=self.at,
                session=self.session,
                review=self.review,
                concept=reply.concept,
                mode=reply.mode,
                correct=correct,
                confidence=reply.confidence,
                shows_belief=self._shows_belief(reply, question),
                first_in_session=not any(r.concept == reply.concept for r in self.records),
                node_id=node_id,
            )
        )

    def _shows_belief(self, reply: Reply, question: dict[str, Any]) -> bool:
        concept = self.world.concepts.get(reply.concept or "")
        if concept is None or concept.misconception is None:
            return False
        return reply.mode == "belief" or reply.value == belief_answer(concept, question)


def belief_answer(concept: Concept, question: dict[str, Any]) -> Any:
    """The answer that shows `concept`'s named belief on this question (None if none)."""
    m = concept.misconception
    if m is None:
        return None
    if question.get("kind") != "multiple_choice" or is_lesson_question(concept, question):
        return m.answer
    return choice_for(concept, list(question.get("options", [])), "belief")


def resolution_due(records: list[AnswerRecord], concept: str) -> bool:
    """Whether the harness should now call the concept's misconception resolved: after the
    session that showed the belief, a later session's first probe on the concept was
    answered right and not marked guessing, and no answer has shown the belief since."""
    mine = [r for r in records if r.concept == concept]
    shown = [r.session for r in mine if r.shows_belief]
    if not shown:
        return False
    first = min(shown)
    rejected = [
        r
        for r in mine
        if r.session > first and r.first_in_session and r.correct and r.confidence != GUESSING
    ]
    if not rejected:
        return False
    last = max(r.at for r in rejected)
    return not any(r.shows_belief and r.at > last for r in mine)
