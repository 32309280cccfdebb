"""The simulated learner: hidden knowledge per concept, answers, confidence, learning.

Per concept the learner *knows* it (with a `Memory` that fades), does *not* know it, or
*holds* a named misconception (`world.Misconception`) that gives one specific wrong answer.
Everything random comes from one seeded `random.Random`; `fork` copies a learner with its
own stream, so policies can start from the same state.

Answering a question on a concept:
- holds a misconception: gives its answer (p = `consistent`), else guesses;
- knows it: recalls it with the memory's probability, then answers right unless it slips
  (`slip`); a failed recall guesses — or, for a concept whose misconception was corrected,
  relapses into it (`relapse`), and the belief is held again;
- does not know it: guesses (a multiple choice uniformly; a number or a word is right
  with `guess_free`, otherwise a wrong one that is never a named misconception's).

Learning: a lesson's teaching text teaches an unknown concept (p = the learner's
`ability`) and lays a trace on a known one; it does not shake a misconception. The
re-teach after a wrong answer corrects a misconception (`fix_reteach`) or teaches again.
A right answer recalled is a retrieval trace; a verdict after a wrong answer shows the
expected answer: a trace of `feedback_weight` for a forgotten concept, a chance
(`learn_feedback`) to learn an unknown one, `fix_feedback` to drop a belief.

Confidence, as the UI offers it (guessing 0.25, fairly 0.6, sure 0.9, or not said): the
level nearest the answer's true chance of being right, plus the profile's bias and noise —
`calibrated` (0), `overconfident` (+0.45), `underconfident` (−0.4); not said when that is
below half of "guessing" (the learner has no idea), and at random (`unsaid`).
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import Any, Literal

from bench.pedagogy.memory import Memory
from bench.pedagogy.world import Answer, Concept, World, choice_for, is_lesson_question

Profile = Literal["calibrated", "overconfident", "underconfident"]
PROFILES: tuple[Profile, ...] = ("calibrated", "overconfident", "underconfident")
Mode = Literal["recalled", "slip", "guess", "belief", "unknown_question"]
LEVELS = (0.25, 0.6, 0.9)
BIAS = {"calibrated": 0.0, "overconfident": 0.45, "underconfident": -0.4}


@dataclass(frozen=True)
class Parameters:
    """Everything tunable about the simulated learner, with its documented defaults."""

    prior_knows: float = 0.15
    prior_misconception: float = 0.35
    ability: tuple[float, float] = (0.55, 0.9)
    decay: float = 0.5
    decay_noise: float = 0.05
    offset_noise: float = 0.3
    consistent: float = 0.9
    slip: float = 0.03
    guess_free: float = 0.05
    relapse: float = 0.5
    fix_reteach: float = 0.5
    fix_feedback: float = 0.15
    learn_feedback: float = 0.3
    feedback_weight: float = 0.5
    confidence_noise: float = 0.1
    unsaid: float = 0.1
    knows_at: float = 0.9
    """Truth: a known concept counts as known while its recall is at least this (the
    harness's desired retention: what `verified` claims)."""


@dataclass
class Knowledge:
    """The hidden state of one concept."""

    memory: Memory
    belief: str | None = None
    """The misconception held now (its name), or None."""
    known: bool = False
    corrected: str | None = None
    """A misconception this learner held and was corrected of (it may relapse)."""


@dataclass(frozen=True)
class Reply:
    """An answer as sent (`value`, `confidence`) and why it was given (`mode`)."""

    value: Any
    confidence: float | None
    mode: Mode
    concept: str | None
    p_right: float


@dataclass(frozen=True)
class Truth:
    state: Literal["knows", "not", "misconception"]
    belief: str | None = None


@dataclass
class SimLearner:
    world: World
    profile: Profile
    seed: int
    params: Parameters = field(default_factory=Parameters)
    rng: random.Random = field(init=False)
    ability: float = field(init=False)
    knowledge: dict[str, Knowledge] = field(init=False)
    seeded: dict[str, str] = field(init=False)
    """concept → the misconception it was seeded with (the beliefs Q2 is scored on)."""

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        p = self.params
        self.ability = self.rng.uniform(*p.ability)
        self.knowledge, self.seeded = {}, {}
        for concept in self.world.concepts.values():
            memory = Memory(
                decay=max(0.2, self.rng.gauss(p.decay, p.decay_noise)),
                offset=self.rng.gauss(0.0, p.offset_noise),
            )
            state = Knowledge(memory=memory)
            draw = self.rng.random()
            if draw < p.prior_knows:
                state.known = True
                for days_ago in (30.0, 10.0, 3.0):
                    memory.add(-days_ago, 1.0)
            elif draw < p.prior_knows + p.prior_misconception and concept.misconception:
                state.belief = concept.misconception.name
                self.seeded[concept.id] = concept.misconception.name
            self.knowledge[concept.id] = state

    def fork(self, stream: str) -> SimLearner:
        """An independent copy with its own random stream (`stream` names it)."""
        twin = copy.deepcopy(self)
        twin.rng = random.Random(f"{self.seed}/{stream}")
        return twin

    # -- the truth ---------------------------------------------------------------------

    def truth(self, concept_id: str, at: float) -> Truth:
        state = self.knowledge[concept_id]
        if state.belief is not None:
            return Truth("misconception", state.belief)
        if state.known and state.memory.recall(at) >= self.params.knows_at:
            return Truth("knows")
        return Truth("not")

    def expected_recall(self, concept_id: str, at: float) -> float:
        """The chance the concept is recalled at `at` (0 unless it is known)."""
        state = self.knowledge[concept_id]
        return state.memory.recall(at) if state.known and state.belief is None else 0.0

    # -- answering -----------------------------------------------------------------------

    def answer(self, question: dict[str, Any], at: float) -> Reply:
        """The answer to a public question frame's `question` (no key in it)."""
        concept = self.world.concept_for(str(question.get("prompt", "")))
        if concept is None:
            value, p_right = self._guess(None, question)
            return self._reply(value, "unknown_question", None, p_right)
        state = self.knowledge[concept.id]
        if state.belief is not None and self.rng.random() < self.params.consistent:
            return self._reply(self._belief(concept, question), "belief", concept, 0.0)
        if state.known and state.belief is None:
            if self.rng.random() < state.memory.recall(at):
                if self.rng.random() < self.params.slip:
                    return self._reply(self._wrong(concept, question), "slip", concept, 0.97)
                return self._reply(self._right(concept, question), "recalled", concept, 0.97)
            if state.corrected and self.rng.random() < self.params.relapse:
                state.belief, state.known = state.corrected, False
                return self._reply(self._belief(concept, question), "belief", concept, 0.0)
        value, p_right = self._guess(concept, question)
        return self._reply(value, "guess", concept, p_right)

    def ask_user(self, question: dict[str, Any]) -> str:
        """A free-form question's reply: a suggestion that fits the profile."""
        options = [str(o.get("text", "")) for o in question.get("options", [])]
        if not options:
            return "An everyday example, please."
        return options[min(1, len(options) - 1)] if self.profile == "underconfident" else options[0]

    def _reply(self, value: Any, mode: Mode, concept: Concept | None, p_right: float) -> Reply:
        return Reply(
            value, self._confidence(p_right), mode, concept.id if concept else None, p_right
        )

    def _confidence(self, p_right: float) -> float | None:
        if self.rng.random() < self.params.unsaid:
            return None
        felt = p_right + BIAS[self.profile] + self.rng.gauss(0.0, self.params.confidence_noise)
        if felt < LEVELS[0] / 2:
            return None  # below even "guessing": nothing to say
        return min(LEVELS, key=lambda level: abs(level - felt))

    def _right(self, concept: Concept, question: dict[str, Any]) -> Any:
        if question.get("kind") != "multiple_choice" or is_lesson_question(concept, question):
            return concept.right
        options = list(question.get("options", []))
        found = choice_for(concept, options, "right")
        if found is not None:
            return found
        belief = choice_for(concept, options, "belief")
        others = [str(o["id"]) for o in options if str(o["id"]) != belief]
        return self.rng.choice(others) if others else concept.right

    def _belief(self, concept: Concept, question: dict[str, Any]) -> Any:
        assert concept.misconception is not None
        if question.get("kind") != "multiple_choice" or is_lesson_question(concept, question):
            return concept.misconception.answer
        found = choice_for(concept, list(question.get("options", [])), "belief")
        return found if found is not None else self._guess(concept, question)[0]

    def _wrong(self, concept: Concept, question: dict[str, Any]) -> Answer:
        """A wrong answer that is no named misconception's (a slip)."""
        if question.get("kind") == "multiple_choice":
            right = self._right(concept, question)
            named = (
                self._named(concept)
                if is_lesson_question(concept, question)
                else choice_for(concept, list(question.get("options", [])), "belief")
            )
            avoid = {str(right), str(named)}
            others = [
                str(o["id"]) for o in question.get("options", []) if str(o["id"]) not in avoid
            ]
            return self.rng.choice(others) if others else str(right)
        return self._wrong_free(concept)

    def _guess(self, concept: Concept | None, question: dict[str, Any]) -> tuple[Any, float]:
        kind = question.get("kind")
        if kind == "multiple_choice":
            options = [str(o["id"]) for o in question.get("options", [])]
            return self.rng.choice(options), 1.0 / max(len(options), 1)
        if concept is not None and self.rng.random() < self.params.guess_free:
            return concept.right, self.params.guess_free
        return self._wrong_free(concept), self.params.guess_free

    def _wrong_free(self, concept: Concept | None) -> Answer:
        if concept is None or concept.kind == "short_answer":
            return "I'm not sure"
        right, named = float(concept.right), self._named(concept)
        offsets = [d for d in (-3, -2, -1, 1, 2, 3) if right + d not in (named, 0.0)]
        return right + self.rng.choice(offsets)

    @staticmethod
    def _named(concept: Concept) -> Answer | None:
        return concept.misconception.answer if concept.misconception else None

    # -- learning ------------------------------------------------------------------------

    def taught(self, concept_id: str, how: str, at: float) -> None:
        """A lesson's teaching ("teach") or re-teaching ("reteach") text was read."""
        state = self.knowledge[concept_id]
        if state.belief is not None:
            if how == "reteach" and self.rng.random() < self.params.fix_reteach:
                self._correct(state, at)
            return
        if state.known:
            state.memory.add(at, 1.0)
        elif self.rng.random() < self.ability:
            state.known = True
            state.memory.add(at, 1.0)

    def graded(self, reply: Reply, correct: bool, at: float) -> None:
        """The verdict on `reply` (it shows the expected answer)."""
        if reply.concept is None:
            return
        state = self.knowledge[reply.concept]
        if correct and reply.mode == "recalled":
            state.memory.add(at, 1.0)
        elif state.belief is not None:
            if self.rng.random() < self.params.fix_feedback:
                self._correct(state, at)
        elif state.known:
            state.memory.add(at, self.params.feedback_weight)
        elif self.rng.random() < self.params.learn_feedback:
            state.known = True
            state.memory.add(at, 1.0)

    def _correct(self, state: Knowledge, at: float) -> None:
        state.corrected, state.belief, state.known = state.belief, None, True
        state.memory.add(at, 1.0)
