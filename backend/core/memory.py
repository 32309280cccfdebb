"""Memory per node: FSRS, with the `fsrs` package's model and parameters, folded from probes.

Every probe event on a node is a review at the event's time, rated from its verdict and the
learner's stated confidence (`rating`). The fold is `fsrs.Scheduler.review_card` with

- **no learning or relearning steps.** A session is the unit here, and re-asking within it
  is the teacher's job (it re-teaches and re-quizzes). Steps of minutes would make every
  node learnt in a lesson "due" ten minutes after it, flooding the review queue. FSRS-6
  still models same-day reviews: a second probe within a day updates stability through its
  short-term formula. So a card is in FSRS's Review state from its first probe on, and
  each review schedules whole days.
- **no fuzzing.** The core has no randomness, and a replay derives the same memory.
- **explicit datetimes.** The package's `Card()` and `review_card` default to the wall
  clock; here every time is a probe's time or the caller's `as_of`.

Why not call `Scheduler.review_card` itself: it costs ≈ 30 µs a review (it copies the
card, builds a `ReviewLog` and dispatches on enums). The 10k-node bench graph has ≈ 73k
probes, so the cold read (B1) would pay ≈ 2.2 s for it, against ≈ 90 ms of headroom.
`MemoryFold` is the same arithmetic, in the package's order of operations, with the
package's parameters: ≈ 1 µs a review. `tests/unit/test_memory.py` holds it equal to
`Scheduler.review_card` (stability, difficulty, due, retrievability, bit for bit) over
random review sequences, so an `fsrs` upgrade that changes the model fails there.

Retrievability is the package's: whole days since the last review (`.days`), so it is
constant within each day after a review. `MemoryFold.valid_until` says when it changes
next, which is what lets a reader keep "as of now" incremental.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import islice
from typing import Literal

import msgspec
from fsrs import Rating, Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS

from backend.core.fsrs_review import Answered, ReviewConstants, review_all
from shared_contracts.graph import Memory

ConfidenceBand = Literal["unsaid", "guessing", "fairly", "sure"]

GUESSING_BELOW = 0.4
"""A stated confidence below this is "guessing" (the UI sends 0.25 for "Guessing")."""
SURE_FROM = 0.75
"""A stated confidence from this up is "sure" (the UI sends 0.9 for "Sure", 0.6 for
"Fairly"): both cut points lie between the UI's levels, so any client's 0–1 value maps to
the nearest of them."""

DAY = timedelta(days=1)
_SPANS: dict[int, timedelta] = {}


_SPANS_KEPT = 4096


def whole_days(days: int) -> timedelta:
    """`timedelta(days=days)`, made once for spans up to ≈ 11 years: building one goes
    through Python integers (≈ 2.5k instructions), and a cold read needs two a node, from
    a few hundred values."""
    span = _SPANS.get(days)
    if span is None:
        span = timedelta(days=days)
        if 0 <= days < _SPANS_KEPT:
            _SPANS[days] = span
    return span


def confidence_band(confidence: float | None) -> ConfidenceBand:
    """How sure the learner said they were (see `GUESSING_BELOW`, `SURE_FROM`)."""
    if confidence is None:
        return "unsaid"
    if confidence < GUESSING_BELOW:
        return "guessing"
    return "sure" if confidence >= SURE_FROM else "fairly"


def rating(correct: bool | None, confidence: float | None) -> Rating:
    """Wrong → Again; right and guessing → Hard; right, unsaid or fairly → Good; right and
    sure → Easy."""
    return Rating(_rating_number(correct, confidence))


_AGAIN, _HARD, _GOOD, _EASY = (
    int(r) for r in (Rating.Again, Rating.Hard, Rating.Good, Rating.Easy)
)
"""The ratings as plain ints (an enum member's `.value` is a descriptor call)."""


def _rating_number(correct: bool | None, confidence: float | None) -> int:
    if not correct:
        return _AGAIN
    if confidence is None:
        return _GOOD
    if confidence < GUESSING_BELOW:
        return _HARD
    return _EASY if confidence >= SURE_FROM else _GOOD


@dataclass(frozen=True, slots=True)
class MemoryPolicy:
    """The learner model's settings: `desired_retention` is both FSRS's scheduling target
    and the recall below which a verified node is `fading` and a node is due for review."""

    desired_retention: float = 0.9
    parameters: tuple[float, ...] = tuple(DEFAULT_PARAMETERS)
    maximum_interval: int = 36500

    def __post_init__(self) -> None:
        if not 0.0 < self.desired_retention < 1.0:
            raise ValueError(f"desired retention must be in (0, 1), not {self.desired_retention}")
        self.scheduler()  # the package validates the parameters

    def scheduler(self) -> Scheduler:
        """The `fsrs.Scheduler` this policy folds like (no steps, no fuzz)."""
        return Scheduler(
            parameters=self.parameters,
            desired_retention=self.desired_retention,
            learning_steps=(),
            relearning_steps=(),
            maximum_interval=self.maximum_interval,
            enable_fuzzing=False,
        )


class MemoryCard(msgspec.Struct, frozen=True, gc=False):
    """A node's FSRS state after its reviews (always FSRS's Review state: no steps). A
    Struct the collector never tracks: a cold read makes one per node (≈ 10k)."""

    stability: float
    difficulty: float
    last_review: datetime
    reviews: int
    due: datetime


@dataclass(frozen=True, slots=True)
class MemoryFold:
    """`Scheduler.review_card` for `policy`, folded over a node's probes (see the module)."""

    policy: MemoryPolicy = field(default_factory=MemoryPolicy)
    _c: ReviewConstants = field(init=False, repr=False)

    def __post_init__(self) -> None:
        policy = self.policy
        constants = ReviewConstants.of(
            policy.parameters, policy.desired_retention, GUESSING_BELOW, SURE_FROM
        )
        object.__setattr__(self, "_c", constants)

    def fold(self, probes: Sequence[Answered], card: MemoryCard | None = None) -> MemoryCard | None:
        """`card` (None: a new card) after reviewing `probes`, which must be in time order
        and no earlier than `card.last_review` (the reviews themselves: `review_all`)."""
        if not probes:
            return card
        c = self._c
        rest: Iterable[Answered] = probes
        if card is None:  # the first review: `_initial_stability`, `_initial_difficulty`
            first = probes[0]
            r = _rating_number(first.correct, first.confidence)
            stability, difficulty = c.initial_stability[r], c.initial_difficulty[r]
            last, reviews = first.at, len(probes)
            rest = islice(probes, 1, None)
        else:
            stability, difficulty = card.stability, card.difficulty
            last, reviews = card.last_review, card.reviews + len(probes)
        stability, difficulty, last = review_all(c, rest, (stability, difficulty, last))
        return MemoryCard(
            stability=stability,
            difficulty=difficulty,
            last_review=last,
            reviews=reviews,
            due=last + whole_days(self.interval_days(stability)),
        )

    def interval_days(self, stability: float) -> int:
        """`Scheduler._next_interval`: whole days until recall reaches the desired retention."""
        days = round((stability / self._c.factor) * self._c.interval_scale)
        if days < 1:
            return 1
        return min(days, self.policy.maximum_interval)

    def retrievability(self, card: MemoryCard, as_of: datetime) -> float:
        """`Scheduler.get_card_retrievability` at `as_of` (whole days since the last review)."""
        decay, factor = self._c.decay, self._c.factor
        days = max(0, (as_of - card.last_review).days)
        return float((1 + factor * days / card.stability) ** decay)

    def valid_until(self, card: MemoryCard, as_of: datetime) -> datetime:
        """The first moment after `as_of` at which `retrievability` may differ from its value
        at `as_of` (the next whole day since the last review)."""
        days = max(0, (as_of - card.last_review).days)
        return card.last_review + whole_days(days + 1)

    def view(self, card: MemoryCard, as_of: datetime | None) -> tuple[Memory, datetime | None]:
        """`memory(card, as_of)` and `valid_until(card, as_of)` at once (the derive's path)."""
        if as_of is None:
            return self.memory(card, None), None
        last = card.last_review
        days = (as_of - last).days
        if days < 0:
            days = 0
        decay, factor = self._c.decay, self._c.factor
        memory = Memory(
            stability=card.stability,
            difficulty=card.difficulty,
            retrievability=float((1 + factor * days / card.stability) ** decay),
            due=card.due,
            last_review=last,
            reviews=card.reviews,
        )
        return memory, last + whole_days(days + 1)

    def memory(self, card: MemoryCard, as_of: datetime | None) -> Memory:
        """The node's `Memory` as of `as_of` (no retrievability without a moment)."""
        return Memory(
            stability=card.stability,
            difficulty=card.difficulty,
            retrievability=None if as_of is None else self.retrievability(card, as_of),
            due=card.due,
            last_review=card.last_review,
            reviews=card.reviews,
        )

    def is_fading(self, memory: Memory | None) -> bool:
        """Recall below the desired retention (False without a moment)."""
        recall = None if memory is None else memory.retrievability
        return recall is not None and recall < self.policy.desired_retention
