"""The simulated learner's subject: the offline lesson library, read bench-side.

What the simulated learner knows *about the subject* (which concept a question touches,
its right answer, which answer a named misconception gives) comes from the lesson files
(`backend/agent/lessons/*.json`), whose quizzes each name the misconception they can show
(`LessonNode.misconception`: one source for the tutor, the offline extractor and the
bench). What it reads over the protocol is only the public question frame: prompt,
options, kind — never a key.

A concept is one lesson node (`lesson/node`). A question is recognised by its prompt (the
lesson's own quiz), or — for a question the library does not hold, such as a review
session's discriminating multiple choice — by the closest known prompt, belief or title
(`concept_for`), and its options by their texts (`choice_for`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz, utils

from backend.agent.offline.lessons import LessonNode, load_lessons
from shared_contracts.questions import MultipleChoice, Numeric, ShortAnswer

LESSONS_DIR = Path(__file__).resolve().parents[2] / "backend" / "agent" / "lessons"
MATCH = 80.0
"""Similarity (0–100, rapidfuzz token-sort ratio) for an unfamiliar text to count as known."""

Answer = str | float


@dataclass(frozen=True)
class Misconception:
    """A named wrong belief and the one wrong answer it gives to its concept's question."""

    name: str
    concept: str
    belief: str
    answer: Answer
    """An option id (multiple choice), a number (numeric) or a text (short answer)."""
    statement: str
    """How the harness states it ("thinks " + the belief)."""


@dataclass(frozen=True)
class Concept:
    id: str
    lesson: str
    node: str
    title: str
    summary: str
    kind: str
    prompt: str
    options: tuple[tuple[str, str], ...]
    right: Answer
    accepted: tuple[str, ...]
    teach: str
    reteach: str
    misconception: Misconception | None

    def words(self, answer: Answer) -> str:
        """An answer as the harness writes it in a statement: option text, `:g`, or text."""
        if self.kind == "multiple_choice":
            return dict(self.options).get(str(answer), str(answer))
        if isinstance(answer, float | int):
            return f"{float(answer):g}"
        return str(answer)

    @property
    def statement(self) -> str:
        """The offline extractor's statement of this node ("title: summary")."""
        return f"{self.title}: {self.summary}" if self.summary.strip() else self.title


@dataclass(frozen=True)
class Lesson:
    id: str
    title: str
    goal: str
    concepts: tuple[Concept, ...]

    @property
    def request(self) -> str:
        """What the learner types to ask for this lesson."""
        return f"I'd like to learn {self.title}"


class World:
    """Every concept of the lesson library, with its named misconception."""

    def __init__(self, lessons: list[Lesson]) -> None:
        self.lessons = lessons
        self.concepts = {c.id: c for lesson in lessons for c in lesson.concepts}
        self._by_prompt = {norm(c.prompt): c for c in self.concepts.values()}

    def lesson(self, lesson_id: str) -> Lesson:
        return next(x for x in self.lessons if x.id == lesson_id)

    def concept_for(self, prompt: str) -> Concept | None:
        """The concept a question touches: its exact prompt, else the closest prompt,
        belief or title above `MATCH`; None for a question about nothing it knows."""
        exact = self._by_prompt.get(norm(prompt))
        if exact is not None:
            return exact
        best: tuple[float, Concept] | None = None
        for concept in self.concepts.values():
            texts = [concept.prompt, concept.title]
            if concept.misconception is not None:
                texts.append(concept.misconception.belief)
            score = max(similarity(prompt, text) for text in texts)
            if score >= MATCH and (best is None or score > best[0]):
                best = (score, concept)
        return best[1] if best else None

    def taught(self, text: str) -> list[tuple[Concept, str]]:
        """(concept, "teach" | "reteach") for each lesson text the tutor's words contain."""
        found = []
        for concept in self.concepts.values():
            if _head(concept.teach) in text:
                found.append((concept, "teach"))
            if _head(concept.reteach) in text:
                found.append((concept, "reteach"))
        return found


def is_lesson_question(concept: Concept, question: dict[str, Any]) -> bool:
    """Whether `question` is the concept's own lesson quiz (same prompt, same kind and, for
    a multiple choice, the same options): then answers are the lesson's own (option ids
    included). A review's discriminating multiple choice may reuse the prompt with other
    options: its options are read by their texts (`choice_for`)."""
    if norm(str(question.get("prompt", ""))) != norm(concept.prompt):
        return False
    if question.get("kind") != concept.kind:
        return False
    options = tuple((str(o.get("id")), str(o.get("text"))) for o in question.get("options", []))
    return concept.kind != "multiple_choice" or options == concept.options


def choice_for(concept: Concept, options: list[dict[str, Any]], want: str) -> str | None:
    """The option id an unfamiliar multiple choice offers for `want` ("right" or
    "belief"), recognised by its text; None when no option says it."""
    if want == "right":
        texts = [concept.words(concept.right), *concept.accepted]
    elif concept.misconception is not None:
        texts = [concept.misconception.belief, concept.words(concept.misconception.answer)]
    else:
        return None
    scored = [
        (max(similarity(str(o.get("text", "")), t) for t in texts), str(o.get("id")))
        for o in options
    ]
    best = max(scored, default=(0.0, ""))
    return best[1] if best[0] >= MATCH else None


def norm(text: str) -> str:
    return " ".join(utils.default_process(text).split())


def similarity(a: str, b: str) -> float:
    return fuzz.token_sort_ratio(a, b, processor=utils.default_process)


def _head(text: str) -> str:
    """The first line of a lesson text: enough to recognise it in the tutor's words."""
    return text.strip().split("\n", 1)[0][:120]


def load_world(lessons_dir: Path = LESSONS_DIR) -> World:
    """The lesson library as the simulated learner's subject: each node a concept, with the
    named misconception the library gives its quiz (the one source of beliefs)."""
    lessons = [
        Lesson(
            lesson.id,
            lesson.title,
            lesson.goal,
            tuple(_concept(lesson.id, n) for n in lesson.nodes),
        )
        for lesson in load_lessons(lessons_dir)
    ]
    return World(lessons)


def _concept(lesson_id: str, node: LessonNode) -> Concept:
    quiz = node.quiz
    concept_id = f"{lesson_id}/{node.id}"
    right: Answer = (
        quiz.correct
        if isinstance(quiz, MultipleChoice)
        else float(quiz.answer)
        if isinstance(quiz, Numeric)
        else quiz.accepted[0]
    )
    named = node.misconception
    misconception = (
        Misconception(named.name, concept_id, named.belief, named.answer, named.statement)
        if named is not None
        else None
    )
    return Concept(
        id=concept_id,
        lesson=lesson_id,
        node=node.id,
        title=node.title,
        summary=node.summary,
        kind=str(type(quiz).__struct_config__.tag),
        prompt=quiz.prompt,
        options=tuple((o.id, o.text) for o in quiz.options)
        if isinstance(quiz, MultipleChoice)
        else (),
        right=right,
        accepted=tuple(quiz.accepted) if isinstance(quiz, ShortAnswer) else (),
        teach=node.teach,
        reteach=node.reteach,
        misconception=misconception,
    )
