"""The offline tutor's rules for a review session: probe each due item, nothing first.

The review is a lesson of probes (`review.review_lesson`). The first reply plans it
(`plan_init`, one node per item, ids the graph's) and asks the first question at once;
then per answer, in the same reply as the next question: right → `plan_mark_done`; wrong →
the lesson's re-teach (marked `plan_update` `reteach`) and the question once more; wrong
again → the answer, `plan_update` `revisit`, and on. No `ask_user_question`, no jobs. After
the last item: how many held, and `stop`. Deterministic: a pure function of the messages.
"""

from __future__ import annotations

from backend.agent.offline import phrases
from backend.agent.offline.lessons import Lesson, LessonNode
from backend.agent.offline.reading import Call, Transcript, read_transcript
from backend.agent.offline.script import (
    MAX_UNANSWERED,
    Reply,
    attempts_on,
    join,
    question_open,
)
from shared_contracts.base import Inbound
from shared_contracts.model_io import ModelMessage
from shared_contracts.tools import (
    PlanInitArgs,
    PlanMarkDoneArgs,
    PlanNodeSpec,
    PlanUpdateArgs,
    QuizArgs,
)

DONE_NOTE = "answered the check question correctly"
NOTHING_DUE = (
    "Nothing is due for review right now — well kept! Start a lesson from home to learn"
    " something new."
)


def decide_review(messages: list[ModelMessage], lesson: Lesson, missing: list[str]) -> Reply:
    """The next reply of a review session over `lesson` (see the module); `missing` are the
    items the library has no question for (said in the first reply)."""
    t = read_transcript(messages)
    inits = [c for c in t.calls if c.name == "plan_init"]
    if not inits:
        return _opening(lesson, missing)
    segment = [c for c in t.calls if c.msg_index >= inits[-1].msg_index]
    if question_open(t, segment):
        return Reply(phrases.waiting())
    said: list[str] = []
    calls: list[tuple[str, Inbound]] = []
    for node in lesson.nodes:
        if _closed(segment, node):
            continue
        tried = attempts_on(segment, node)
        if "right" in tried:
            said.append(phrases.praise(node))
            calls.append(("plan_mark_done", PlanMarkDoneArgs(id=node.id, note=DONE_NOTE)))
            continue  # on to the next item's question, in this reply
        if tried.count("wrong") >= 2 or tried.count("none") >= MAX_UNANSWERED:
            if tried.count("wrong") >= 2:
                said.append(phrases.reveal(node))
            calls.append(("plan_update", PlanUpdateArgs(id=node.id, status="revisit")))
            continue
        if tried and tried[-1] == "wrong":
            said.append(phrases.reteach(node))
            calls.append(("plan_update", PlanUpdateArgs(id=node.id, reteach=True)))
        elif tried:
            said.append(phrases.retry_lead(node))
        calls.append(("quiz", QuizArgs(question=node.quiz, node_id=node.id)))
        return Reply(join(*said), calls)
    if calls:
        return Reply(join(*said), calls)
    return Reply(join(*said, _recap(t, segment, lesson)))


def _opening(lesson: Lesson, missing: list[str]) -> Reply:
    left_out = (
        "I have no question for "
        + ", ".join(f"“{m}”" for m in missing)
        + ", so it is left out of this review."
        if missing
        else ""
    )
    if not lesson.nodes:
        return Reply(join(left_out, NOTHING_DUE if not missing else "So there is nothing to ask."))
    steps = "\n".join(f"{i}. {n.title}" for i, n in enumerate(lesson.nodes, start=1))
    intro = (
        f"Time for a review: {len(lesson.nodes)} item{'s' if len(lesson.nodes) != 1 else ''}"
        f" due.\n\n{steps}\n\nOne question each, before any explaining."
    )
    plan = PlanInitArgs(
        goal=lesson.goal,
        nodes=[PlanNodeSpec(id=n.id, title=n.title, summary=n.summary) for n in lesson.nodes],
    )
    first = lesson.nodes[0]
    return Reply(
        join(intro, left_out),
        [("plan_init", plan), ("quiz", QuizArgs(question=first.quiz, node_id=first.id))],
    )


def _closed(segment: list[Call], node: LessonNode) -> bool:
    """Marked done, or left to revisit (the plan moved on)."""
    return any(
        c.node_id == node.id
        and (
            c.name == "plan_mark_done"
            or (c.name == "plan_update" and c.args.get("status") == "revisit")
        )
        for c in segment
    )


def _recap(t: Transcript, segment: list[Call], lesson: Lesson) -> str:
    done = {c.node_id for c in segment if c.name == "plan_mark_done"}
    held = sum(1 for n in lesson.nodes if n.id in done)
    mark = f"That's the review done: {held} of {len(lesson.nodes)} held."
    if t.said(mark):
        return "The review is done. Start a lesson from home to learn something new."
    lines = [mark, ""]
    lines += [
        f"- ✓ {n.title}" if n.id in done else f"- ↻ {n.title} (we'll come back to it)"
        for n in lesson.nodes
    ]
    return "\n".join(lines)
