"""Q1–Q6 and the code that gathers them, on fabricated harness answers.

The review queue, node memory, calibration and review chats run here against fabricated
responses in PROTOCOL.md's shapes (the real ones run in the smoke test); a harness without
a route makes the scores say what they wait for.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import anyio
import httpx
import pytest

from bench.pedagogy.client import HarnessClient, NotAvailable
from bench.pedagogy.learner import Parameters, SimLearner, Truth
from bench.pedagogy.memory import Memory
from bench.pedagogy.observe import ConceptView, read_graph
from bench.pedagogy.recall_score import ReviewPoint, auc, fractional_retrievability, log_loss, q4
from bench.pedagogy.scores import ResolveCheck, Sample, q1, q2, q3, q5, q6
from bench.pedagogy.session import SessionLog
from bench.pedagogy.student import SimStudent, moment
from bench.pedagogy.tracks import (
    MEMORY_API,
    HarnessTrack,
    LearnerResult,
    Plan,
    grade,
    live,
    public_question,
)
from bench.pedagogy.world import load_world

WORLD = load_world()
ADD = WORLD.concepts["fractions/adding-fractions"]
MEANING = WORLD.concepts["fractions/fraction-meaning"]


def offline_graph(*, add_state: str = "shaky", memory: bool = False) -> dict[str, Any]:
    """A graph as the offline extractor writes one today, plus optional `memory`."""
    extra = {"memory": {"stability": 2.0, "retrievability": 0.8, "due": None}} if memory else {}
    return {
        "nodes": [
            {
                "id": "node-m",
                "kind": "proposition",
                "state": "verified",
                "statement": MEANING.statement,
                "probes": [],
                **extra,
            },
            {
                "id": "node-a",
                "kind": "proposition",
                "state": add_state,
                "statement": ADD.statement,
                "probes": [
                    {"question": ADD.prompt, "at": "2031-01-06T09:00:00Z", "correct": False}
                ],
                **extra,
            },
            {
                "id": "node-x",
                "kind": "misconception",
                "state": "misconception",
                "statement": f"thinks “$\\frac{{2}}{{6}}$” is the answer to: {ADD.prompt}",
            },
            {
                "id": "node-y",
                "kind": "misconception",
                "state": "misconception",
                "statement": f"thinks “I'm not sure” is the answer to: {MEANING.prompt}",
            },
            {
                "id": "node-z",
                "kind": "proposition",
                "state": "unseen",
                "statement": "Adding whole numbers",
            },
        ],
        "sessions": [],
    }


def test_the_graph_is_read_per_concept_and_beliefs_by_the_answer_they_quote():
    views = read_graph(offline_graph(), WORLD, [MEANING.id, ADD.id])
    assert views[MEANING.id].verdict == "misconception"  # an unnamed one, from a slip
    assert views[MEANING.id].open_beliefs() == [None]
    assert views[ADD.id].state == "shaky" and views[ADD.id].node_id == "node-a"
    assert views[ADD.id].open_beliefs() == ["add-tops-and-bottoms"]
    # The learner-model wave states the belief itself (and names it): still read.
    named = {
        "id": "n",
        "kind": "misconception",
        "state": "resolved",
        "statement": ADD.misconception.belief,
    }
    views = read_graph({"nodes": [named]}, WORLD, [ADD.id])
    assert views[ADD.id].misconceptions == [("n", "resolved", "add-tops-and-bottoms")]
    assert views[ADD.id].verdict == "absent"


def test_q1_agreement_and_its_confusion_matrix():
    verified = ConceptView(state="verified")
    held = ConceptView(state="shaky", misconceptions=[("n", "misconception", "b")])
    other = ConceptView(state="shaky", misconceptions=[("n", "misconception", None)])
    samples = [
        Sample(0, Truth("knows"), verified),  # right
        Sample(0, Truth("misconception", "b"), held),  # right
        Sample(7, Truth("not"), verified),  # wrong: verified but forgotten
        Sample(7, Truth("knows"), other),  # wrong: a slip made a misconception
        Sample(7, Truth("not"), ConceptView(state="fading")),  # right
    ]
    score = q1(samples)
    assert score.figures["accuracy"] == pytest.approx(0.6) and not score.passed
    assert score.figures["accuracy_by_day"] == {"0": 1.0, "7": pytest.approx(1 / 3)}
    assert score.figures["confusion"]["not → verified"] == 1
    assert q1(
        [Sample(0, Truth("knows"), verified)] * 9 + [Sample(0, Truth("not"), verified)]
    ).passed


def test_q2_counts_unnamed_nodes_and_duplicates_as_false_positives():
    seeded = {ADD.id: "add-tops-and-bottoms", MEANING.id: "top-and-bottom-swapped"}
    views = {
        ADD.id: ConceptView(
            misconceptions=[
                ("1", "misconception", "add-tops-and-bottoms"),
                ("2", "misconception", "add-tops-and-bottoms"),
            ]
        ),
        MEANING.id: ConceptView(misconceptions=[("3", "misconception", None)]),
    }
    score = q2([(seeded, views)])
    assert score.figures["precision"] == pytest.approx(1 / 3)
    assert score.figures["recall"] == pytest.approx(1 / 2)
    assert score.figures["false_positives"]["duplicates"] == 1
    guessed = {ADD.id: ConceptView(misconceptions=[("4", "misconception", "add-tops-and-bottoms")])}
    shown = q2([(seeded, views), ({}, guessed)], [{ADD.id: 2}, {ADD.id: 1}])
    assert shown.figures["nodes_by_times_shown"] == {
        "false, shown once": 1,
        "true, shown twice or more": 1,
    }
    perfect = {ADD.id: ConceptView(misconceptions=[("1", "resolved", "add-tops-and-bottoms")])}
    assert q2([({ADD.id: "add-tops-and-bottoms"}, perfect)]).passed


def test_q3_is_a_miss_until_misconceptions_are_probed_later_then_it_is_measured():
    waiting = q3([], ["GET /api/review"])
    assert not waiting.available and not waiting.passed and "GET /api/review" in waiting.value
    good = [ResolveCheck(True, False, "resolved"), ResolveCheck(False, True, "misconception")]
    assert q3(good, []).passed
    early = [*good, ResolveCheck(False, True, "resolved")]
    assert q3(early, []).figures["resolved_while_held"] == pytest.approx(0.5)
    assert not q3(early, []).passed


def test_q4_auc_and_log_loss():
    assert auc([(0.9, True), (0.2, False), (0.5, True), (0.5, False)]) == pytest.approx(0.875)
    assert log_loss([(0.5, True), (0.5, False)]) == pytest.approx(math.log(2))
    assert math.isnan(auc([(0.9, True)]))
    points = [
        ReviewPoint(3.4, "proposition", r, 2.0, elapsed, y, "recalled" if y else "guess")
        for r, elapsed, y in [(0.9, 1.2, True), (0.8, 2.5, True), (0.3, 9.0, False)]
    ] + [ReviewPoint(0.4, "misconception", 1.0, 0.2, 0.3, False, "belief")]
    score = q4(points, [])
    assert score.figures["reviews"] == 4 and score.figures["auc"] == pytest.approx(0.5)
    assert not score.passed  # the same-day 1.0 on a wrong answer ranks above right ones
    assert score.figures["same_day"]["reviews"] == 1
    assert score.figures["by_kind"]["proposition"]["auc"] == 1.0
    # FSRS-6's curve at the exact elapsed time: 0.9 at one stability, lower after a wrong
    # answer's small one, even the same day.
    assert fractional_retrievability(replace(points[0], elapsed=2.0)) == pytest.approx(0.9)
    assert fractional_retrievability(points[3]) < 0.9
    assert q4(points[:3], []).passed
    missing = q4([], [MEMORY_API])
    assert not missing.available and MEMORY_API in missing.value


def test_q5_and_q6_judge_their_goals():
    verdicts = {
        "overconfident": ["overconfident"] * 9 + ["calibrated"],
        "calibrated": ["calibrated"] * 10,
    }
    assert q5(verdicts, []).passed
    assert not q5({**verdicts, "calibrated": ["overconfident"] * 2 + ["calibrated"] * 8}, []).passed
    assert not q5({}, ["GET /api/calibration"]).available
    sure_and_wrong = [(0.9, True)] * 14 + [(0.9, False)] * 6
    mostly_right = [(0.9, True)] * 18 + [(0.6, True), (0.6, False)]
    why = q5(verdicts, [], {"overconfident": [sure_and_wrong], "calibrated": [mostly_right]})
    assert why.figures["mean_gap"] == {"overconfident": [0.27], "calibrated": [0.01]}
    assert why.figures["if_min_gap"]["0.100"]["overconfident_flagged"] == 1.0
    assert why.figures["if_min_gap"]["0.100"]["calibrated_flagged_over"] == 0.0
    retained = {"none": 1.0, "fixed": 6.0, "harness": 5.0}
    reviews = {"none": 0.0, "fixed": 45.0, "harness": 20.0}
    score = q6(retained, reviews, [])
    assert score.figures["ratio"] == pytest.approx((4 / 20) / (5 / 45)) and score.passed
    waiting = q6(retained, {**reviews, "harness": 0.0}, ["GET /api/review"])
    assert not waiting.available and "fixed intervals 6.00 with 45 reviews" in waiting.note


def test_the_client_names_missing_routes():
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/chats":
            body = request.content.decode()
            return httpx.Response(400 if "mode" in body else 201, json={"id": "chat-1"})
        if request.url.path == "/api/calibration":
            return httpx.Response(200, json={"verdict": "calibrated", "brier": 0.1})
        return httpx.Response(404, json={"status_code": 404})

    async def main() -> None:
        async with httpx.AsyncClient(
            transport=httpx.MockTransport(answer), base_url="http://t"
        ) as http:
            api = HarnessClient(http)
            assert await api.create_chat("Fractions") == "chat-1"
            with pytest.raises(NotAvailable, match="mode"):
                await api.create_chat("Review", mode="review")
            with pytest.raises(NotAvailable) as missing:
                await api.review_queue()
            assert missing.value.api == "GET /api/review"
            assert (await api.calibration())["verdict"] == "calibrated"

    anyio.run(main)


class FabricatedHarness:
    """PROTOCOL.md's next API, fabricated: a review queue offering the adding node once,
    a graph that marks its misconception resolved after the review, a calibration."""

    def __init__(self) -> None:
        self.reviewed = False
        self.chats: list[tuple[str, str | None]] = []
        self.ws = "ws://fabricated"
        self.times: list[Any] = []
        self.as_of: list[str] = []

    def now(self, at: Any) -> None:
        self.times.append(at)

    async def create_chat(self, title: str, mode: str | None = None) -> str:
        self.chats.append((title, mode))
        return f"chat-{len(self.chats)}"

    async def end_session(self, chat_id: str) -> None:
        return None

    async def chat(self, chat_id: str) -> dict[str, Any]:
        return {"created_at": "2031-01-06T09:00:00Z"}

    async def graph(self, as_of: str | None = None) -> dict[str, Any]:
        """Now: after the review, the adding node has its probe; as of a moment: the
        memory then (0.4, a day and a half after the lesson's review)."""
        graph = offline_graph(add_state="verified", memory=True)
        adding = graph["nodes"][1]
        if as_of is not None:
            self.as_of.append(as_of)
            adding["memory"] = {
                "stability": 2.0,
                "retrievability": 0.4,
                "last_review": "2031-01-06T09:00:00Z",
            }
        if self.reviewed:
            graph["nodes"][2]["state"] = "resolved"
            adding["probes"].append({"chat_id": "chat-2", "at": "2031-01-07T18:00:00Z"})
        return graph

    async def review_queue(self) -> dict[str, Any]:
        """The adding node is due from day 1 on, until it is reviewed."""
        due = self.times[-1] > moment(1) and not self.reviewed
        item = {"node_id": "node-a", "reason": "misconception_open", "retrievability": 0.4}
        return {"as_of": self.times[-1].isoformat(), "items": [item] if due else []}

    async def calibration(self) -> dict[str, Any]:
        return {"verdict": "calibrated", "answers": 4}

    async def run(self, ws: str, chat_id: str, opening: str, student: SimStudent) -> SessionLog:
        """A lesson asks the lesson question; the review asks a discriminating probe."""
        review = opening == "Let's review."
        if review:
            self.reviewed = True
            question = {
                "kind": "multiple_choice",
                "prompt": "To add fractions, do you add the numerators and add the denominators?",
                "node_id": "node-a",
                "options": [
                    {"id": "x", "text": "Yes: add the numerators and add the denominators"},
                    {"id": "y", "text": "No: a common denominator first, then add the numerators"},
                ],
            }
            right = "y"
        else:
            question = {**public_question(ADD), "node_id": "adding-fractions"}
            right = ADD.right
        value, _ = student.answer({"tool_call_id": "t1", "question": question})
        student.verdict({"correct": value == right})
        return SessionLog(chat_id=chat_id, frames={"question": 1, "verdict": 1})


def test_the_review_policy_scores_q3_q4_q5_on_fabricated_answers():
    """Day 0 the learner shows its belief; day 1 home offers a review of that node, whose
    probe it answers right (the belief corrected meanwhile); the harness then says
    resolved. Q3, Q4 and Q5 are measured, the missing-API list stays empty."""
    fake = FabricatedHarness()
    learner = SimLearner(WORLD, "calibrated", 3, Parameters(consistent=1.0, unsaid=0.0))
    state = learner.knowledge[ADD.id]
    state.belief, state.known = "add-tops-and-bottoms", False
    lesson = WORLD.lesson("fractions")
    result = LearnerResult.of(learner, [lesson], 0)
    track = HarnessTrack(WORLD, learner, fake, fake, result, run=fake.run)  # type: ignore[arg-type]
    original_home = track.home

    async def home(at: float) -> None:
        if at > 1:  # the belief was corrected off-screen before the review
            state.belief, state.known, state.memory = None, True, Memory(0.5, 3.0)
            state.memory.add(at - 0.01, 1.0)
        await original_home(at)

    track.home = home  # type: ignore[method-assign]
    plan = Plan(lessons=("fractions",), days=3, sample_days=(0, 3))
    anyio.run(live, track, [lesson], plan)
    assert fake.chats == [("Fractions", None), ("Review", "review")]
    assert result.records[0].shows_belief and result.records[1].review
    assert [(p.kind, p.retrievability, p.correct) for p in result.pairs] == [
        ("proposition", 0.4, True)
    ]
    assert result.pairs[0].elapsed == pytest.approx(1 + 9 / 24)  # 09:00 to 18:00 next day
    assert fake.as_of == ["2031-01-07T17:59:59.999999+00:00"]  # just before the answer
    assert [p.at.day for p in result.histories["node-a"]] == [6, 7]  # to re-fold (whatif)
    assert result.reviews["harness"] == 1 and result.reviews["fixed"] == 2 * 3
    assert result.checks == [
        ResolveCheck(expected=True, held=False, state="resolved", node="3/node-x", last="recalled")
    ]
    assert result.calibration == "calibrated" and result.missing == set()
    assert q3(result.checks, []).passed
    assert q4(result.pairs, []).figures["reviews"] == 1
    assert len(result.retention["harness"]) == 4 and {s.day for s in result.samples} == {0, 3}
    assert grade(ADD, "b") and not grade(ADD, "a")
