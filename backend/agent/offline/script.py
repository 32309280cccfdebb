"""The offline tutor's rules: the next reply as a pure function of the transcript.

Per lesson: `plan_init`; then per node: teaching text (+ background job calls, not waited
for) and a `quiz`; a right answer → `plan_mark_done`; a wrong one → re-teach (marked with
`plan_update` `reteach`, so the retry's answer counts as helped) and the same quiz once
more; a second miss → the answer is given and the node is marked to revisit
(`plan_update` status `revisit`: the plan's focus moves on with the lesson). Before a
node is taught, each "check first" node the server put in the plan for it is probed when
the library has a question for it (`checks`).
After the first node: one `ask_user_question`, whose reply is acknowledged. After the
last node: a recap and `stop`. Finished jobs are acknowledged once, whenever they arrive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from backend.agent.offline import phrases
from backend.agent.offline.checks import check_step
from backend.agent.offline.from_text import DocumentLessons
from backend.agent.offline.lessons import Lesson, LessonNode, lesson_for_goal, match_lesson
from backend.agent.offline.reading import Call, Transcript, error_text, read_transcript
from shared_contracts.base import Inbound
from shared_contracts.model_io import ModelMessage
from shared_contracts.tools import (
    JOB_TOOLS,
    LEARNER_TOOLS,
    SERVER_TOOLS,
    AskUserArgs,
    DemoArgs,
    GradedOutput,
    JobOutput,
    PlanInitArgs,
    PlanMarkDoneArgs,
    PlanNodeSpec,
    PlanUpdateArgs,
    QuizArgs,
    ReplyOutput,
    ResearchArgs,
    VisualArgs,
)

Grade = Literal["right", "wrong", "none"]
MAX_UNANSWERED = 3
"""A quiz re-asked this often without an answer is skipped, so the lesson cannot stall."""


@dataclass(frozen=True)
class Reply:
    """One model response: text, then tool calls (name, args); finish follows from calls."""

    text: str
    calls: list[tuple[str, Inbound]] = field(default_factory=list)

    @property
    def finish_reason(self) -> Literal["stop", "tool_calls"]:
        return "tool_calls" if self.calls else "stop"


def decide(
    messages: list[ModelMessage],
    lessons: list[Lesson],
    offered: frozenset[str] = JOB_TOOLS,
    document: DocumentLessons | None = None,
) -> Reply:
    """The tutor's next reply to `messages` (deterministic; no state outside them).
    Job tools missing from `offered` (not wired in this deployment) are not called. With a
    `document` (the session teaches from the learner's material) its lessons are the
    library, and the learner's first words choose the part to learn (no menu)."""
    if document is not None:
        lessons = document.all
    t = read_transcript(messages)
    prefix = _job_acks(t)
    inits = [c for c in t.calls if c.name == "plan_init"]
    if not inits:
        return _choose(t, lessons, prefix, since=-1, document=document)
    init = inits[-1]
    lesson = _lesson_for(init, lessons)
    segment = [c for c in t.calls if c.msg_index >= init.msg_index]
    prefix += _reactions(t, segment, lesson)
    if question_open(t, segment):
        return Reply(join(*prefix, phrases.waiting()))
    step = _next_step(lesson, segment, prefix, offered, lessons)
    if step is not None:
        return step
    if not t.said(phrases.recap_mark(lesson), after=init.msg_index - 1):
        return Reply(join(*prefix, _recap(lesson, segment, lessons)))
    if t.new_learner_text():
        return _choose(t, lessons, prefix, since=init.msg_index, document=document)
    return Reply(join(*prefix) or f"{phrases.recap_mark(lesson)} is complete.")


def join(*parts: str) -> str:
    return "\n\n".join(p for p in parts if p)


def _choose(
    t: Transcript,
    lessons: list[Lesson],
    prefix: list[str],
    since: int,
    document: DocumentLessons | None = None,
) -> Reply:
    """Greet and list the lessons, or start the one the learner asked for (from a
    document: the part they named, else all of it)."""
    query = t.new_learner_text()
    if document is not None:
        lesson: Lesson | None = document.pick(query)
    else:
        lesson = match_lesson(query, lessons) if query else None
    if lesson is None and query and t.said(phrases.GREETING_MARK, after=since):
        lesson = lessons[0]  # asked once already: don't loop on an unclear answer
    if lesson is None:
        return Reply(join(*prefix, phrases.greeting(lessons, requested_topic(query))))
    args = PlanInitArgs(
        goal=lesson.goal,
        nodes=[
            PlanNodeSpec(
                id=n.id,
                title=n.title,
                summary=n.summary,
                parent=n.parent,
                passages=n.passages or msgspec.UNSET,
            )
            for n in lesson.nodes
        ],
    )
    return Reply(join(*prefix, phrases.plan_intro(lesson)), [("plan_init", args)])


_TOPIC_REQUEST = re.compile(r"\b(learn|teach|practi[cs]e|explain|study)\b", re.IGNORECASE)
TOPIC_CHARS = 80


def requested_topic(text: str) -> str:
    """The topic a message asks to learn ("Help me learn: X" → "X"), or "" when it does not
    ask for one (a greeting, an unclear reply)."""
    if not _TOPIC_REQUEST.search(text):
        return ""
    _, colon, tail = text.partition(":")
    topic = " ".join((tail if colon and tail.strip() else text).split())
    return topic if len(topic) <= TOPIC_CHARS else topic[: TOPIC_CHARS - 1] + "…"


def question_open(t: Transcript, segment: list[Call]) -> bool:
    """The last question still waits for its answer and the learner has said nothing new
    (e.g. a job result arrived meanwhile): asking again would duplicate it."""
    questions = [c for c in segment if c.name in LEARNER_TOOLS]
    if not questions or t.new_learner_text():
        return False
    outcome = questions[-1].outcome()
    return not isinstance(outcome, GradedOutput | ReplyOutput)


def _lesson_for(init: Call, lessons: list[Lesson]) -> Lesson:
    goal = init.args.get("goal")
    goal = goal if isinstance(goal, str) else ""
    return lesson_for_goal(goal, lessons) or match_lesson(goal, lessons) or lessons[0]


def _grade(call: Call) -> Grade:
    outcome = call.outcome()
    if isinstance(outcome, GradedOutput):
        return "right" if outcome.verdict.correct else "wrong"
    return "none"


def attempts_on(segment: list[Call], node: LessonNode) -> list[Grade]:
    return [_grade(c) for c in segment if c.name == "quiz" and c.node_id == node.id]


def _finished(segment: list[Call], node: LessonNode) -> bool:
    """Marked done, or missed twice, or left unanswered too often."""
    if any(c.name == "plan_mark_done" and c.node_id == node.id for c in segment):
        return True
    attempts = attempts_on(segment, node)
    return attempts.count("wrong") >= 2 or attempts.count("none") >= MAX_UNANSWERED


def _left(segment: list[Call], node: LessonNode) -> bool:
    """Finished without being shown (missed twice, or left unanswered too often)."""
    return _finished(segment, node) and not any(
        c.name == "plan_mark_done" and c.node_id == node.id for c in segment
    )


def _marked_revisit(segment: list[Call], node: LessonNode) -> bool:
    return any(
        c.name == "plan_update" and c.node_id == node.id and c.args.get("status") == "revisit"
        for c in segment
    )


def _next_step(
    lesson: Lesson,
    segment: list[Call],
    prefix: list[str],
    offered: frozenset[str],
    lessons: list[Lesson],
) -> Reply | None:
    asked = any(c.name == "ask_user_question" for c in segment)
    for i, node in enumerate(lesson.nodes):
        if _left(segment, node) and not _marked_revisit(segment, node):
            revisit = PlanUpdateArgs(id=node.id, status="revisit")
            return Reply(join(*prefix), [("plan_update", revisit)])
        if _finished(segment, node):
            continue
        attempts = attempts_on(segment, node)
        if "right" in attempts:
            mark = PlanMarkDoneArgs(id=node.id, note="answered the check question correctly")
            return Reply(join(*prefix, phrases.praise(node)), [("plan_mark_done", mark)])
        if i > 0 and not asked:
            return _ask(lesson, prefix)
        quiz = ("quiz", QuizArgs(question=node.quiz, node_id=node.id))
        if not attempts:
            check = check_step(segment, node, lessons)
            if check is not None:
                return Reply(join(*prefix, check[0]), check[1])
            jobs = [(name, brief) for name, brief in node.job_briefs() if name in offered]
            jobs_called = any(c.name in JOB_TOOLS and c.node_id == node.id for c in segment)
            if jobs and not jobs_called:
                return Reply(join(*prefix, phrases.teach(node)), _job_calls(node, jobs))
            lead = phrases.quiz_lead(node) if jobs else phrases.teach(node)
            return Reply(join(*prefix, lead), [quiz])
        if attempts[-1] == "wrong":
            reteach = ("plan_update", PlanUpdateArgs(id=node.id, reteach=True))
            return Reply(join(*prefix, phrases.reteach(node)), [reteach, quiz])
        return Reply(join(*prefix, phrases.retry_lead(node)), [quiz])
    if not asked:
        return _ask(lesson, prefix)
    return None


def _ask(lesson: Lesson, prefix: list[str]) -> Reply:
    args = AskUserArgs(prompt=lesson.ask.prompt, suggestions=list(lesson.ask.suggestions))
    return Reply(join(*prefix, phrases.ask_lead()), [("ask_user_question", args)])


def _job_calls(node: LessonNode, jobs: list[tuple[str, str]]) -> list[tuple[str, Inbound]]:
    calls: list[tuple[str, Inbound]] = []
    for name, brief in jobs:
        if name == "research":
            calls.append((name, ResearchArgs(question=brief, node_id=node.id)))
        elif name == "demo":
            calls.append((name, DemoArgs(brief=brief, node_id=node.id)))
        else:
            calls.append((name, VisualArgs(brief=brief, node_id=node.id)))
    return calls


def _reactions(t: Transcript, segment: list[Call], lesson: Lesson) -> list[str]:
    """Sentences about answers not yet reacted to (checked by whether the tutor said them
    after the call: a result can land before a later message), and new plan-tool errors."""
    nodes = {n.id: n for n in lesson.nodes}
    out: list[str] = []
    for call in segment:
        outcome = call.outcome()
        node = nodes.get(call.node_id or "")
        sentence = ""
        if call.name == "quiz" and node is not None and _grade(call) == "wrong":
            if attempts_on(segment, node).count("wrong") == 2:
                sentence = phrases.reveal(node)
        elif call.name == "ask_user_question" and isinstance(outcome, ReplyOutput):
            sentence = phrases.reply_ack(outcome.answer)
        elif call.name in SERVER_TOOLS and outcome == "error" and t.is_new(call):
            sentence = phrases.plan_error_note()
        if sentence and not t.said(sentence, after=call.msg_index) and sentence not in out:
            out.append(sentence)
    return out


def _job_acks(t: Transcript) -> list[str]:
    """One sentence per finished or failed job not yet acknowledged in the transcript."""
    out: list[str] = []
    for call in t.calls:
        if call.name not in JOB_TOOLS:
            continue
        outcome = call.outcome()
        if isinstance(outcome, JobOutput) and outcome.status in ("done", "failed", "cancelled"):
            sentence = phrases.job_ack(call.name, outcome)
        elif outcome == "error":
            sentence = phrases.job_ack(call.name, None, error_text(call.result) or "error")
        else:
            continue
        if not t.said(sentence) and sentence not in out:
            out.append(sentence)
    return out


def _recap(lesson: Lesson, segment: list[Call], lessons: list[Lesson]) -> str:
    marked = {c.node_id or "" for c in segment if c.name == "plan_mark_done"}
    return phrases.recap(lesson, marked, lessons)
