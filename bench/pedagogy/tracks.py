"""One simulated learner's run: lessons through a real harness, then three review policies.

Day 0: the learner takes each lesson (a chat over the real WebSocket, ended through
`POST /api/chats/{id}/extract`). Its hidden state is then forked into three policies:

- `harness`: every day at 18:00 (a minute later each day) the learner opens home; when
  `GET /api/review` offers items it takes a review chat (`POST /api/chats {"mode":
  "review"}`) and ends it. The graph is read at the sample days (Q1) and after each review
  (Q3); each reviewed node's memory just before its first probe in the review
  (`GET /api/graph?as_of=`) is the prediction Q4 scores; `GET /api/calibration` at the
  end gives Q5's verdict;
- `none`: no review;
- `fixed`: each lesson question again 1, 3, 7, 14 and 30 days after the lesson, with the
  verdict shown (the simulator grades it by the lesson's key).

Retention (expected concepts recalled) is taken every day at 17:00 for each policy.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx

from bench.pedagogy.client import HarnessClient, NotAvailable
from bench.pedagogy.learner import Profile, SimLearner
from bench.pedagogy.observe import ConceptView, read_graph
from bench.pedagogy.recall_score import ReviewPoint
from bench.pedagogy.scores import ResolveCheck, Sample
from bench.pedagogy.server import HarnessServer
from bench.pedagogy.session import run_session
from bench.pedagogy.student import STEP, AnswerRecord, SimStudent, moment, resolution_due
from bench.pedagogy.whatif import ProbeAt
from bench.pedagogy.world import Concept, Lesson, World

LESSON_GAP = 40 / (24 * 60)
CURVE_AT = 8 / 24
"""17:00: when retention is taken and the graph sampled (before the day's review)."""
REVIEW_AT = 9 / 24
"""18:00: when the learner opens home on day 0."""
HOME_DRIFT = 1 / (24 * 60)
"""Home opens a minute later each day (18:00 on day 0, 19:00 on day 60): the harness counts
whole days since a review, and a review exactly one day after the last, both at 18:00 and
a session's real seconds apart, would sit on that boundary — due or not by milliseconds,
so a run would not repeat itself. A minute a day keeps k days apart at k whole days."""
MEMORY_API = "`memory` on GET /api/graph nodes"
REVIEW_API = "GET /api/review"
REVIEW_CHAT_API = 'POST /api/chats {"mode": "review"}'


@dataclass(frozen=True)
class Plan:
    lessons: tuple[str, ...]
    days: int
    sample_days: tuple[int, ...]
    fixed_days: tuple[int, ...] = (1, 3, 7, 14, 30)
    desired_retention: float | None = None
    """The harness's `LH_DESIRED_RETENTION` (None: its default)."""


@dataclass
class LearnerResult:
    index: int
    seed: int
    profile: Profile
    concepts: list[str]
    seeded: dict[str, str]
    samples: list[Sample] = field(default_factory=list)
    final: dict[str, ConceptView] = field(default_factory=dict)
    checks: list[ResolveCheck] = field(default_factory=list)
    pairs: list[ReviewPoint] = field(default_factory=list)
    histories: dict[str, list[ProbeAt]] = field(default_factory=dict)
    """Each reviewed node's probes in the final graph (to re-fold them: `whatif`)."""
    """Q4: the harness's memory of each node before its first probe in a review."""
    calibration: str | None = None
    missing: set[str] = field(default_factory=set)
    retention: dict[str, list[float]] = field(default_factory=dict)
    reviews: dict[str, int] = field(default_factory=dict)
    records: list[AnswerRecord] = field(default_factory=list)
    frames: Counter[str] = field(default_factory=Counter)
    taught: Counter[str] = field(default_factory=Counter)
    """Lesson texts the learner read: "teach" and "reteach" counts."""
    sessions: int = 0
    server_times: list[str] = field(default_factory=list)
    """The `created_at` of each chat as the server stamped it (its simulated clock)."""

    @classmethod
    def of(cls, learner: SimLearner, lessons: list[Lesson], index: int) -> LearnerResult:
        """An empty result for `learner` taking `lessons` (their concepts are scored)."""
        concepts = [c.id for lesson in lessons for c in lesson.concepts]
        seeded = {c: b for c, b in learner.seeded.items() if c in concepts}
        return cls(index, learner.seed, learner.profile, concepts, seeded)


class HarnessTrack:
    """The learner's life on the real harness (one server, one data dir)."""

    def __init__(
        self,
        world: World,
        learner: SimLearner,
        server: Any,
        api: HarnessClient,
        result: LearnerResult,
        run: Callable[[str, str, str, SimStudent], Awaitable[Any]] = run_session,
    ) -> None:
        """`server`: a `HarnessServer` (its `ws` and `now`); `run`: how a session is run
        (tests pass fabricated ones)."""
        self.world, self.learner, self.server, self.api = world, learner, server, api
        self.result, self.run = result, run

    async def session(
        self,
        title: str,
        opening: str,
        at: float,
        *,
        review: bool = False,
    ) -> SimStudent:
        self.server.now(moment(at))
        chat_id = await self.api.create_chat(title, mode="review" if review else None)
        student = SimStudent(self.learner, at, self.result.sessions, review, chat_id)
        log = await self.run(self.server.ws, chat_id, opening, student)
        await self.api.end_session(chat_id)
        self.result.sessions += 1
        self.result.records.extend(student.records)
        self.result.frames.update(log.frames)
        self.result.taught.update(how for _, how in student.taught)
        self.result.server_times.append(str((await self.api.chat(chat_id)).get("created_at")))
        return student

    async def views(self, at: float) -> dict[str, ConceptView]:
        self.server.now(moment(at))
        graph = await self.api.graph()
        propositions = [n for n in graph.get("nodes", []) if n.get("kind") == "proposition"]
        if propositions and not any("memory" in n for n in propositions):
            self.result.missing.add(MEMORY_API)
        return read_graph(graph, self.world, self.result.concepts)

    async def sample(self, day: int) -> None:
        """Q1: the graph and the truth on `day` at 17:00."""
        views = await self.views(day + CURVE_AT)
        for concept, view in views.items():
            at = day + CURVE_AT
            truth = self.learner.truth(concept, at)
            recall = self.learner.expected_recall(concept, at)
            self.result.samples.append(Sample(day=day, truth=truth, view=view, recall=recall))

    async def home(self, at: float) -> None:
        """Open home; take the review it offers, if any (what a review needs, once found
        missing, is not asked for again)."""
        if {REVIEW_API, REVIEW_CHAT_API} & self.result.missing:
            return
        self.server.now(moment(at))
        try:
            queue = await self.api.review_queue()
        except NotAvailable as missing:
            self.result.missing.update({missing.api, REVIEW_CHAT_API})  # what Q3, Q6 need
            return
        items = queue.get("items", [])
        if not items:
            return
        try:
            student = await self.session("Review", "Let's review.", at, review=True)
        except NotAvailable as missing:
            self.result.missing.add(missing.api)
            return
        self.result.reviews["harness"] = self.result.reviews.get("harness", 0) + len(
            student.records
        )
        await self.predictions(student)
        await self.resolve_checks(student.at)

    async def predictions(self, student: SimStudent) -> None:
        """Q4: for the first probe of each node in this review, the node's memory as of
        just before it was answered (`GET /api/graph?as_of=`, the probe's own time less a
        microsecond) against the answer. A node with no memory yet predicts nothing."""
        now = await self.api.graph()
        first_probe = {
            str(n["id"]): min(
                (str(p["at"]) for p in n.get("probes", []) if p.get("chat_id") == student.chat_id),
                default=None,
            )
            for n in now.get("nodes", [])
        }
        asked: set[str] = set()
        for record in student.records:
            if record.node_id is None or record.node_id in asked:
                continue
            asked.add(record.node_id)
            probed = first_probe.get(record.node_id)
            if probed is None:
                continue
            before = _instant(probed) - timedelta(microseconds=1)
            past = await self.api.graph(as_of=before.isoformat())
            node: dict[str, Any] = next(
                (n for n in past.get("nodes", []) if n.get("id") == record.node_id), {}
            )
            memory = node.get("memory")
            if not isinstance(memory, dict) or memory.get("retrievability") is None:
                continue
            elapsed = (before - _instant(str(memory["last_review"]))) / timedelta(days=1)
            self.result.pairs.append(
                ReviewPoint(
                    day=record.at,
                    kind=str(node.get("kind")),
                    retrievability=float(memory["retrievability"]),
                    stability=float(memory["stability"]),
                    elapsed=elapsed,
                    correct=record.correct,
                    mode=record.mode,
                    node_id=record.node_id,
                    as_of=before,
                )
            )

    async def histories(self) -> None:
        """Each reviewed node's probes as the final graph has them."""
        reviewed = {p.node_id for p in self.result.pairs}
        for node in (await self.api.graph()).get("nodes", []):
            if node.get("id") in reviewed:
                self.result.histories[str(node["id"])] = sorted(
                    (
                        ProbeAt(_instant(str(p["at"])), bool(p.get("correct")), p.get("confidence"))
                        for p in node.get("probes", [])
                    ),
                    key=lambda p: p.at,
                )

    async def resolve_checks(self, at: float) -> None:
        views = await self.views(at)
        for concept, view in views.items():
            truth = self.learner.truth(concept, at)
            due = resolution_due(self.result.records, concept)
            last = [r.mode for r in self.result.records if r.concept == concept]
            for node_id, state, belief in view.misconceptions:
                if belief is None:
                    continue
                held = truth.state == "misconception" and truth.belief == belief
                check = ResolveCheck(
                    expected=due,
                    held=held,
                    state=state,
                    node=f"{self.result.seed}/{node_id}",
                    last=last[-1] if last else "",
                )
                self.result.checks.append(check)


async def run_learner(
    world: World, plan: Plan, index: int, profile: Profile, seed: int, root: Path
) -> LearnerResult:
    learner = SimLearner(world, profile, seed)
    lessons = [world.lesson(lesson) for lesson in plan.lessons]
    result = LearnerResult.of(learner, lessons, index)
    settings = (
        {"LH_DESIRED_RETENTION": str(plan.desired_retention)}
        if plan.desired_retention is not None
        else {}
    )
    server = HarnessServer(root, moment(0), settings)
    try:
        with anyio.CancelScope(shield=True):  # a start cut short would leave it running
            await anyio.to_thread.run_sync(server.__enter__)
        async with httpx.AsyncClient(base_url=server.http, timeout=30.0, trust_env=False) as http:
            track = HarnessTrack(world, learner, server, HarnessClient(http), result)
            await live(track, lessons, plan)
    finally:
        with anyio.CancelScope(shield=True):  # stopped even when a sibling failed
            await anyio.to_thread.run_sync(server.stop)
    return result


async def live(track: HarnessTrack, lessons: list[Lesson], plan: Plan) -> None:
    """Day 0's lessons, then each day of the harness policy, then the baselines."""
    result, learner = track.result, track.learner
    at = 0.0
    for lesson in lessons:
        await track.session(lesson.title, lesson.request, at)
        at += LESSON_GAP
    baselines = {"none": learner.fork("none"), "fixed": learner.fork("fixed")}
    result.retention["harness"] = []
    result.reviews.setdefault("harness", 0)
    for day in range(plan.days + 1):
        result.retention["harness"].append(_retained(learner, result.concepts, day + CURVE_AT))
        if day in plan.sample_days:
            await track.sample(day)
        if day < plan.days:
            await track.home(day + REVIEW_AT + day * HOME_DRIFT)
    try:
        result.calibration = str((await track.api.calibration()).get("verdict"))
    except NotAvailable as missing:
        result.missing.add(missing.api)
    result.final = await track.views(plan.days + CURVE_AT)
    await track.histories()
    for policy, twin in baselines.items():
        days = plan.fixed_days if policy == "fixed" else ()
        result.retention[policy], result.reviews[policy] = simulate(
            twin, track.world, result.concepts, plan.days, days
        )


def simulate(
    learner: SimLearner, world: World, concepts: list[str], days: int, review_days: tuple[int, ...]
) -> tuple[list[float], int]:
    """A policy run in the simulator alone: each concept's lesson question on `review_days`
    (18:00), graded by the lesson's key, the verdict shown. (retention per day, reviews)."""
    curve, reviews = [], 0
    for day in range(days + 1):
        curve.append(_retained(learner, concepts, day + CURVE_AT))
        if day not in review_days:
            continue
        at = day + REVIEW_AT
        for concept_id in concepts:
            concept = world.concepts[concept_id]
            at += STEP
            reply = learner.answer(public_question(concept), at)
            learner.graded(reply, grade(concept, reply.value), at)
            reviews += 1
    return curve, reviews


def _retained(learner: SimLearner, concepts: list[str], at: float) -> float:
    return sum(learner.expected_recall(c, at) for c in concepts)


def public_question(concept: Concept) -> dict[str, Any]:
    """The lesson question as a `question` frame shows it: no key."""
    return {
        "kind": concept.kind,
        "prompt": concept.prompt,
        "options": [{"id": i, "text": t} for i, t in concept.options],
    }


def grade(concept: Concept, value: Any) -> bool:
    """The lesson's key applied as the server would (exact option, number, or text)."""
    if concept.kind == "multiple_choice":
        return str(value) == concept.right
    if concept.kind == "numeric":
        with contextlib.suppress(TypeError, ValueError):
            return abs(float(value) - float(concept.right)) <= 1e-9 * max(
                1.0, abs(float(concept.right))
            )
        return False
    return " ".join(str(value).split()).casefold() in {a.casefold() for a in concept.accepted}


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
