"""A review session for the offline tutor: the due items as a lesson of probes.

Each item of the review brief (`core.review_session`) becomes a node whose id is the graph
node's id (so its quiz, tagged with it, probes that node) and whose question comes from the
lesson library:
- a proposition: the lesson question that probed it before (found by the probes' prompts,
  or by its statement, the offline extractor's "title: summary");
- a misconception: a *discriminating* multiple choice on the question whose named belief it
  states (`LessonNode.misconception`): the right answer, and the belief's answer as the
  distractor (a lesson multiple choice already is one: its own question is used);
- an item the library has no question for is left out (the tutor says which).
The re-teach after a wrong answer is the lesson's; there is no teaching before a probe.
A concept's misconception is probed before its proposition.
"""

from __future__ import annotations

import hashlib

from backend.agent.offline.lessons import (
    AskSpec,
    Lesson,
    LessonNode,
    NamedMisconception,
    belief_words,
    node_for_prompt,
)
from backend.core.graph_state import normalise_statement
from backend.core.questions import expected_text
from shared_contracts.learner import ReviewBriefItem
from shared_contracts.questions import Choice, MultipleChoice, QuestionSpec

REVIEW_ID = "review"
TITLE_CHARS = 200


def review_lesson(items: list[ReviewBriefItem], lessons: list[Lesson]) -> tuple[Lesson, list[str]]:
    """(the review as a lesson of probes, statements of the items it has no question for).
    The lesson has no nodes when nothing could be probed."""
    found: list[tuple[int, bool, LessonNode]] = []
    concepts: dict[str, int] = {}  # lesson node → its first place in the brief
    missing: list[str] = []
    for item in items:
        probe = _probe(item, lessons)
        if probe is None:
            missing.append(item.statement)
            continue
        source, node = probe
        order = concepts.setdefault(source.id, len(concepts))
        found.append((order, item.kind != "misconception", node))
    found.sort(key=lambda entry: entry[:2])  # stable: the brief's order, misconception first
    nodes = [node for *_, node in found]
    lesson = Lesson(
        id=REVIEW_ID,
        title="Review",
        subject="review",
        goal=f"Review: {len(nodes)} item{'s' if len(nodes) != 1 else ''} due",
        ask=AskSpec(prompt="How did that review feel?"),
        summary="A review of what was due.",
        nodes=nodes,
    )
    return lesson, missing


def _probe(item: ReviewBriefItem, lessons: list[Lesson]) -> tuple[LessonNode, LessonNode] | None:
    """(the lesson node it comes from, the item as a node with its question), or None
    when the library has no question for it."""
    if item.kind == "misconception":
        source = _node_of_belief(item, lessons)
        if source is None or source.misconception is None:
            return None
        question: QuestionSpec = discriminating(source.quiz, source.misconception)
    else:
        source = _node_of_proposition(item, lessons)
        if source is None:
            return None
        question = source.quiz
    # A misconception's statement would give the answer away: its node is titled by the
    # concept, and says nothing of why it is due before the learner answers.
    mixup = item.kind == "misconception"
    node = LessonNode(
        id=item.node_id,
        title=f"A mix-up about: {source.title}" if mixup else item.statement[:TITLE_CHARS],
        summary="" if mixup else item.detail,
        teach=item.detail,
        quiz=question,
        reteach=source.reteach,
    )
    return source, node


def _node_of_belief(item: ReviewBriefItem, lessons: list[Lesson]) -> LessonNode | None:
    wanted = {normalise_statement(item.statement), normalise_statement(item.wrong_belief)}
    for lesson in lessons:
        for node in lesson.nodes:
            belief = node.misconception
            if belief is not None and normalise_statement(belief.statement) in wanted:
                return node
    return None


def _node_of_proposition(item: ReviewBriefItem, lessons: list[Lesson]) -> LessonNode | None:
    for probe in reversed(item.probes):
        found = node_for_prompt(probe.question, lessons)
        if found is not None:
            return found[1]
    wanted = normalise_statement(item.statement)
    for lesson in lessons:
        for node in lesson.nodes:
            statement = f"{node.title}: {node.summary}" if node.summary.strip() else node.title
            if normalise_statement(statement) == wanted:
                return node
    return None


def discriminating(quiz: QuestionSpec, belief: NamedMisconception) -> MultipleChoice:
    """A multiple choice on `quiz`'s prompt whose distractor is the belief's answer: the
    lesson's own question when it is one already, else the right answer and the belief's,
    in an order fixed by their texts (not always the right one first)."""
    if isinstance(quiz, MultipleChoice):
        return quiz
    right = expected_text(quiz)
    wrong = belief_words(quiz, belief)
    texts = sorted([right, wrong], key=lambda t: hashlib.sha256(t.encode()).hexdigest())
    options = [Choice(id=chr(ord("a") + i), text=t) for i, t in enumerate(texts)]
    correct = next(o.id for o in options if o.text == right)
    return MultipleChoice(
        prompt=quiz.prompt, options=options, correct=correct, explanation=quiz.explanation
    )
