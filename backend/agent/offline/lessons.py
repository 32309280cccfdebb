"""The offline tutor's lesson library: data files in `backend/agent/lessons/*.json`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
from rapidfuzz import fuzz, utils

from backend.core.errors import CorruptRecord
from backend.core.questions import format_number, grade, normalise_answer, parse_number
from shared_contracts.base import Id
from shared_contracts.materials import PassageSpec
from shared_contracts.questions import MultipleChoice, Numeric, QuestionSpec

DEFAULT_LESSONS_DIR = Path(__file__).resolve().parent.parent / "lessons"
MATCH_THRESHOLD = 80.0
"""Word-to-keyword similarity (0–100) needed to call a learner's text a clear choice."""

Short = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
Long = Annotated[str, msgspec.Meta(min_length=1, max_length=4000)]


class _Data(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Lesson files are authored by hand: an unknown (misspelt) field is an error."""


class AskSpec(_Data, kw_only=True, frozen=True):
    prompt: Long
    suggestions: Annotated[list[str], msgspec.Meta(max_length=8)] = msgspec.field(
        default_factory=list
    )


class Prerequisite(_Data, kw_only=True, frozen=True):
    """Something a node rests on that the lesson does not teach. `quote` is a sentence of the
    node's `teach` text that relies on it: the offline extractor's evidence."""

    statement: Short
    quote: Short
    check: QuestionSpec | None = None
    """A question that shows it: the offline tutor asks it when the plan checks this
    prerequisite first (a "check first" node titled with `statement`)."""


class NamedMisconception(_Data, kw_only=True, frozen=True):
    """A wrong belief a node's quiz can show: the one specific wrong answer it gives
    (`answer`: an option id of a multiple choice, a number, or a text). The pedagogy bench's
    simulated learners hold these same beliefs (`bench/pedagogy/world.py` reads them here)."""

    name: Id
    belief: Short
    """The wrong belief, worded to follow "thinks" ("the bottom number … is the numerator")."""
    answer: str | float

    @property
    def statement(self) -> str:
        """The misconception node's statement: the belief itself, as UX.md labels one."""
        return f"thinks {self.belief}"


class LessonNode(_Data, kw_only=True, frozen=True):
    """One plan node: its teaching text, one quiz, a re-teach text, optional job briefs,
    what it rests on without teaching it, and the named misconception its quiz can show."""

    id: Id
    title: Short
    summary: str = ""
    parent: Id | None = None
    teach: Long
    quiz: QuestionSpec
    reteach: Long
    research: str = ""
    demo: str = ""
    visual: str = ""
    rests_on: list[Prerequisite] = msgspec.field(default_factory=list)
    passages: list[PassageSpec] = msgspec.field(default_factory=list)
    """A node built from the learner's document: the passages it quotes (its plan node
    carries them, checked like a model's)."""
    misconception: NamedMisconception | None = None

    def job_briefs(self) -> list[tuple[str, str]]:
        """(tool name, brief) for each background job this node asks for, in a fixed order."""
        briefs = (("research", self.research), ("demo", self.demo), ("visual", self.visual))
        return [(name, brief) for name, brief in briefs if brief]


class Lesson(_Data, kw_only=True, frozen=True):
    """A whole lesson: plan goal, nodes in teaching order, the free-form question, a recap."""

    id: Id
    title: Short
    subject: Short
    blurb: str = ""
    keywords: list[str] = msgspec.field(default_factory=list)
    goal: Short
    ask: AskSpec
    summary: Long
    nodes: Annotated[list[LessonNode], msgspec.Meta(min_length=1, max_length=50)]


_DECODER = msgspec.json.Decoder(Lesson)


def load_lessons(directory: Path | None = None) -> list[Lesson]:
    """Every `*.json` lesson in `directory`, ordered by file name; `CorruptRecord` if any
    file does not decode, repeats a node id, or names a parent before defining it."""
    root = directory or DEFAULT_LESSONS_DIR
    lessons = [_load(path) for path in sorted(root.glob("*.json"))]
    if not lessons:
        raise CorruptRecord(str(root), "no lesson files")
    return lessons


def _load(path: Path) -> Lesson:
    try:
        lesson = _DECODER.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError) as exc:
        raise CorruptRecord(str(path), str(exc)) from exc
    seen: set[str] = set()
    for node in lesson.nodes:
        if node.id in seen:
            raise CorruptRecord(str(path), f"duplicate node id {node.id!r}")
        if node.parent is not None and node.parent not in seen:
            raise CorruptRecord(str(path), f"node {node.id!r}: parent must come first")
        for pre in node.rests_on:
            if pre.quote not in node.teach:
                raise CorruptRecord(
                    str(path), f"node {node.id!r}: rests_on quote not in its teach text"
                )
        if node.misconception is not None:
            problem = _belief_problem(node.quiz, node.misconception)
            if problem:
                raise CorruptRecord(str(path), f"node {node.id!r}: misconception {problem}")
        seen.add(node.id)
    return lesson


def _belief_problem(quiz: QuestionSpec, belief: NamedMisconception) -> str:
    """Why `belief`'s answer is not a wrong answer `quiz` can be given ("" when it is)."""
    answer = belief.answer
    if isinstance(quiz, MultipleChoice):
        ids = {o.id for o in quiz.options}
        if answer not in ids or answer == quiz.correct:
            return f"answer {answer!r} must be a wrong option id of {sorted(ids)}"
    elif isinstance(quiz, Numeric):
        if isinstance(answer, str) or grade(quiz, answer).correct:
            return f"answer {answer!r} must be a wrong number"
    elif isinstance(answer, float) or grade(quiz, answer).correct:
        return f"answer {answer!r} must be a wrong text"
    return ""


def belief_words(quiz: QuestionSpec, belief: NamedMisconception) -> str:
    """The belief's answer as the learner would see or type it (an option's text)."""
    if isinstance(quiz, MultipleChoice):
        return next((o.text for o in quiz.options if o.id == belief.answer), str(belief.answer))
    if isinstance(belief.answer, float):
        return format_number(belief.answer)
    return belief.answer


def shows_belief(quiz: QuestionSpec, belief: NamedMisconception, answer: str) -> bool:
    """Whether `answer` (as the transcript words it: an option's text, the number or text
    typed) is the belief's answer to `quiz` or to a question built from it."""
    words = belief_words(quiz, belief)
    if isinstance(quiz, Numeric):
        given, expected = parse_number(answer, quiz.unit), parse_number(words)
        return given is not None and given == expected
    return bool(normalise_answer(answer)) and normalise_answer(answer) == normalise_answer(words)


def node_for_prompt(prompt: str, lessons: list[Lesson]) -> tuple[Lesson, LessonNode] | None:
    """The lesson node whose quiz asks `prompt` (compared normalised)."""
    wanted = normalise_answer(prompt)
    for lesson in lessons:
        for node in lesson.nodes:
            if normalise_answer(node.quiz.prompt) == wanted:
                return lesson, node
    return None


def lesson_for_goal(goal: str, lessons: list[Lesson]) -> Lesson | None:
    """The lesson whose plan goal (or title) is exactly `goal`."""
    return next((x for x in lessons if goal in (x.goal, x.title)), None)


def match_lesson(text: str, lessons: list[Lesson]) -> Lesson | None:
    """The lesson the learner's text asks for (a number from the menu, or the best fuzzy
    word match over title + keywords), or None when nothing matches clearly."""
    stripped = text.strip().rstrip(".")
    if stripped.isdigit() and 1 <= int(stripped) <= len(lessons):
        return lessons[int(stripped) - 1]
    words = utils.default_process(text).split()
    best: tuple[float, Lesson] | None = None
    for lesson in lessons:
        terms = [*lesson.title.split(), *lesson.keywords]
        score = max(
            (fuzz.ratio(w, t, processor=utils.default_process) for w in words for t in terms),
            default=0.0,
        )
        if best is None or score > best[0]:
            best = (score, lesson)
    if best is None or best[0] < MATCH_THRESHOLD:
        return None
    return best[1]
