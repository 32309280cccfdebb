"""Everything the offline tutor says, as pure functions of lesson data and tool outputs.

Some sentences double as markers: the tutor checks whether it already said them (a
greeting, a recap, a job acknowledgement) instead of keeping state.
"""

from __future__ import annotations

from backend.agent.offline.lessons import Lesson, LessonNode
from backend.agent.untrusted import inline_literal as lit
from shared_contracts.jobs import DemoPage, ResearchNote, Visual
from shared_contracts.questions import MultipleChoice, Numeric, QuestionSpec, ShortAnswer
from shared_contracts.tools import JobOutput

GREETING_MARK = "I'm the offline tutor"
JOB_NOUNS = {"research": "research note", "demo": "demo", "visual": "diagram"}


def menu(lessons: list[Lesson]) -> str:
    return "\n".join(
        f"{i}. **{lit(lesson.title)}** ({lit(lesson.subject)}) — {lit(lesson.blurb)}"
        for i, lesson in enumerate(lessons, start=1)
    )


def greeting(lessons: list[Lesson], missing_topic: str = "") -> str:
    """The menu; `missing_topic` (what the learner asked for, when no lesson covers it) is
    named first, so a request the library cannot serve is answered, not ignored."""
    missing = (
        f"I have no lesson on “{missing_topic}” in my offline library (with a model key, the "
        "teacher can teach any topic).\n\n"
        if missing_topic
        else ""
    )
    return (
        f"Hi! {GREETING_MARK}: I run without a model key and teach from a small built-in "
        "library, planning each lesson, checking with questions and re-teaching when "
        f"something doesn't click.\n\n{missing}What would you like to learn?\n\n"
        f"{menu(lessons)}\n\nType a topic or its number."
    )


def plan_intro(lesson: Lesson) -> str:
    steps = "\n".join(f"{i}. {lit(n.title)}" for i, n in enumerate(lesson.nodes, start=1))
    return (
        f"Let's learn **{lit(lesson.title)}**. Here is the plan:\n\n{steps}\n\n"
        "I'll explain each part, then check it with a question."
    )


def teach(node: LessonNode) -> str:
    return f"### {lit(node.title)}\n\n{node.teach}"


def quiz_lead(node: LessonNode) -> str:
    return f"Now a quick check on **{lit(node.title)}**."


def praise(node: LessonNode) -> str:
    explanation = node.quiz.explanation
    return f"Correct! {explanation}".strip()


def reteach(node: LessonNode) -> str:
    return f"Not quite. {node.reteach}\n\nLet's try that question once more."


def retry_lead(node: LessonNode) -> str:
    return f"Let's come back to the question on **{lit(node.title)}**."


def expected_answer(question: QuestionSpec) -> str:
    """The key, in words (said only after the learner has answered twice)."""
    if isinstance(question, MultipleChoice):
        chosen = [o.text for o in question.options if o.id == question.correct]
        return chosen[0] if chosen else question.correct
    if isinstance(question, ShortAnswer):
        return question.accepted[0]
    return _numeric(question)


def _numeric(question: Numeric) -> str:
    number = f"{question.answer:g}"
    return f"{number} {question.unit}".strip()


def reveal(node: LessonNode) -> str:
    return (
        f"Not quite again — the answer is {expected_answer(node.quiz)}. "
        f"{node.quiz.explanation} We'll move on; this one is worth revisiting later."
    ).replace("  ", " ")


def waiting() -> str:
    return "Take your time with the question above — I'll wait for your answer."


def ask_lead() -> str:
    return "Before we go on, a question for you."


def reply_ack(answer: str) -> str:
    quoted = answer.strip().replace("\n", " ")
    if len(quoted) > 120:
        quoted = quoted[:117] + "…"
    if not quoted:
        return "Thanks — let's carry on."
    lowered = quoted.lower()
    if any(w in lowered for w in ("unsure", "not sure", "confused", "lost", "no idea")):
        return f"Thanks for telling me (“{quoted}”). No problem — we'll take the next part slowly."
    return f"Thanks — you said “{quoted}”. I'll keep that in mind as we go on."


def plan_error_note() -> str:
    return "(The plan panel didn't take that update; no matter, let's carry on.)"


def job_ack(kind: str, output: JobOutput | None, error: str = "") -> str:
    """One sentence about a finished (or failed) background job."""
    noun = JOB_NOUNS.get(kind, kind)
    result = output.result if output is not None else None
    if isinstance(result, ResearchNote):
        excerpt = result.body.strip().split("\n")[0]
        if len(excerpt) > 200:
            excerpt = excerpt[:197] + "…"
        return f"The research note is in — “{result.title}”. {excerpt}".strip()
    if isinstance(result, DemoPage):
        return f"The demo is ready — “{result.title}” is in the panel; have a play with it."
    if isinstance(result, Visual):
        caption = f" {result.caption}" if result.caption else ""
        return f"The diagram is ready — “{result.title}”.{caption}"
    reason = error or (output.error or output.status if output is not None else "no result")
    return (
        f"The {noun} I asked for didn't come through ({reason[:120]}); let's carry on without it."
    )


def recap_mark(lesson: Lesson) -> str:
    return f"That's the lesson on **{lesson.title}**"


def recap(lesson: Lesson, done: set[str], lessons: list[Lesson]) -> str:
    """The closing message; `done` holds the ids of nodes marked done."""
    lines = [f"{recap_mark(lesson)} — well done.", "", f"**Recap:** {lesson.summary}", ""]
    lines += [
        f"- ✓ {n.title}" if n.id in done else f"- ↻ {n.title} (worth revisiting)"
        for n in lesson.nodes
    ]
    lines += ["", "Want another lesson? Tell me which:", "", menu(lessons)]
    return "\n".join(lines)


def check_lead(title: str) -> str:
    return f"First, a quick check of something this builds on: **{title}**."


def check_right(title: str) -> str:
    return f"Good — **{title}** is solid, so let's build on it."


def check_wrong(title: str) -> str:
    return f"Not quite — **{title}** is worth revisiting; I'll keep it in mind as we go on."
