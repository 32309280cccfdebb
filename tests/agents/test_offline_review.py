"""The offline tutor runs review sessions (issue 19 item 4): from the review block in its
instructions it plans the due items, probes each before explaining anything — a
misconception with a discriminating multiple choice whose distractor is the belief — and
re-teaches, retries and leaves to revisit as in a lesson."""

from __future__ import annotations

from backend.agent.offline import OfflineTutor, load_lessons
from backend.core.review_session import render_review_block
from shared_contracts.graph import Probe
from shared_contracts.learner import ReviewBriefItem
from shared_contracts.model_io import ModelMessage
from shared_contracts.questions import MultipleChoice
from shared_contracts.tools import PlanInitArgs, PlanMarkDoneArgs, PlanUpdateArgs, QuizArgs
from tests.agents.test_offline_tutor import Loop, names
from tests.unit.test_graph_probes import T0

FRACTIONS = next(x for x in load_lessons() if x.id == "fractions")
MEANING, SCALE = FRACTIONS.nodes[0], FRACTIONS.nodes[1]


def item(
    node_id: str, statement: str, kind: str = "proposition", prompt: str = ""
) -> ReviewBriefItem:
    probes = (
        [Probe(at=T0, chat_id="c1", question=prompt, answer="x", expected="y", correct=False)]
        if prompt
        else []
    )
    return ReviewBriefItem(
        node_id=node_id,
        statement=statement,
        kind=kind,  # type: ignore[arg-type]
        reason="misconception_open" if kind == "misconception" else "due",
        detail="You knew this 3 weeks ago; you'd now recall it about 70% of the time.",
        wrong_belief=statement if kind == "misconception" else "",
        probes=probes,
    )


BRIEF = [
    item("node-0003", MEANING.misconception.statement, "misconception"),  # type: ignore[union-attr]
    item("node-0002", "Equivalent fractions: Different-looking fractions with the same value"),
    item(
        "node-0001",
        "What a fraction means: Numerator and denominator: parts of a whole",
        prompt=MEANING.quiz.prompt,
    ),
    item("node-0009", "Adding whole numbers"),
]


def review_loop(brief: list[ReviewBriefItem]) -> Loop:
    system = ModelMessage(role="system", content=f"You teach.\n\n{render_review_block(brief)}")
    return Loop(OfflineTutor(), messages=[system])


def quiz_of(loop: Loop) -> QuizArgs:
    assert loop.pending_question is not None
    args = loop.pending_question[1]
    assert isinstance(args, QuizArgs)
    return args


async def test_a_review_probes_each_due_item_misconception_first() -> None:
    loop = review_loop(BRIEF)
    opening = await loop.say("Let's review.")
    assert names(opening) == ["plan_init", "quiz"]
    init = opening[0].args[0][1]
    assert isinstance(init, PlanInitArgs)
    # A concept's misconception before its proposition; what the library cannot probe is
    # left out, and said so.
    assert [n.id for n in init.nodes] == ["node-0003", "node-0001", "node-0002"]
    assert init.nodes[0].title == "A mix-up about: What a fraction means"  # no giveaway
    assert "“Adding whole numbers”" in opening[0].done.message.content
    # The discriminating question: the lesson's prompt, the belief's answer as distractor.
    first = quiz_of(loop)
    assert first.node_id == "node-0003"
    assert isinstance(first.question, MultipleChoice)
    assert first.question.prompt == MEANING.quiz.prompt
    texts = {o.id: o.text for o in first.question.options}
    assert sorted(texts.values()) == ["denominator", "numerator"]
    assert texts[first.question.correct] == "denominator"
    assert MEANING.teach not in loop.all_text()  # asked before anything is explained

    right = await loop.answer(correct=True)
    assert names(right) == ["plan_mark_done", "quiz"]
    assert right[0].args[0][1] == PlanMarkDoneArgs(
        id="node-0003", note="answered the check question correctly"
    )
    assert quiz_of(loop) == QuizArgs(question=MEANING.quiz, node_id="node-0001")

    retry = await loop.answer(correct=False)
    assert names(retry) == ["plan_update", "quiz"]
    assert retry[0].args[0][1] == PlanUpdateArgs(id="node-0001", reteach=True)
    assert MEANING.reteach in retry[0].done.message.content
    moved_on = await loop.answer(correct=False)
    assert names(moved_on) == ["plan_update", "quiz"]
    assert moved_on[0].args[0][1] == PlanUpdateArgs(id="node-0001", status="revisit")
    assert quiz_of(loop) == QuizArgs(question=SCALE.quiz, node_id="node-0002")

    last = await loop.answer(correct=True)
    assert names(last) == ["plan_mark_done"]
    recap = loop.steps[-1]
    assert recap.done.finish_reason == "stop"
    assert "That's the review done: 2 of 3 held." in recap.done.message.content
    assert "ask_user_question" not in names(loop.steps)
    assert loop.tree is not None
    assert [n.status for n in loop.tree.nodes] == ["done", "revisit", "done"]


async def test_a_review_with_nothing_to_probe_says_so_and_stops() -> None:
    loop = review_loop([item("node-0009", "Adding whole numbers")])
    (only,) = await loop.say("Let's review.")
    assert names([only]) == [] and only.done.finish_reason == "stop"
    assert "no question for “Adding whole numbers”" in only.done.message.content
    empty = review_loop([])
    (nothing,) = await empty.say("Let's review.")
    assert "Nothing is due for review right now" in nothing.done.message.content
