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

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import islice
from typing import Literal, Protocol

import msgspec
from fsrs import Rating, Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS, MAX_DIFFICULTY, MIN_DIFFICULTY, STABILITY_MIN

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


class Answered(Protocol):
    """What a review needs from a probe (an `EventLine` or a `Probe`)."""

    @property
    def at(self) -> datetime: ...
    @property
    def correct(self) -> bool | None: ...
    @property
    def confidence(self) -> float | None: ...


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
class _Constants:
    """The package's formulas' constant parts, per rating (index 1–4) where they depend on it;
    each computed by the same expression as in `fsrs.scheduler`, so every value is equal."""

    decay: float
    factor: float
    initial_stability: tuple[float, ...]
    initial_difficulty: tuple[float, ...]
    short_term_increase: tuple[float, ...]
    difficulty_delta: tuple[float, ...]
    recall_bonus: tuple[float, ...]
    """Hard's penalty or Easy's bonus (1 for Good: the package multiplies by both)."""
    mean_target: float
    keep: float
    recall_base: float
    neg_w9: float
    w10: float
    w11: float
    neg_w12: float
    w13: float
    w14: float
    forget_divisor: float
    neg_w19: float
    interval_scale: float
    """`Scheduler._next_interval`'s `(desired_retention ** (1 / decay)) - 1`."""

    @classmethod
    def of(cls, w: tuple[float, ...], desired_retention: float) -> _Constants:
        e, ratings = math.e, range(5)
        decay = -w[20]
        return cls(
            decay=decay,
            factor=0.9 ** (1 / decay) - 1,
            initial_stability=tuple(max(w[max(r, 1) - 1], STABILITY_MIN) for r in ratings),
            initial_difficulty=tuple(
                min(max(w[4] - (e ** (w[5] * (r - 1))) + 1, MIN_DIFFICULTY), MAX_DIFFICULTY)
                for r in ratings
            ),
            short_term_increase=tuple(e ** (w[17] * (r - 3 + w[18])) for r in ratings),
            difficulty_delta=tuple(-(w[6] * (r - 3)) for r in ratings),
            recall_bonus=tuple(
                w[15] if r == Rating.Hard else w[16] if r == Rating.Easy else 1.0 for r in ratings
            ),
            # `_mean_reversion` towards `_initial_difficulty(Easy, clamp=False)`
            mean_target=w[7] * (w[4] - (e ** (w[5] * (Rating.Easy - 1))) + 1),
            keep=1 - w[7],
            recall_base=e ** (w[8]),
            neg_w9=-w[9],
            w10=w[10],
            w11=w[11],
            neg_w12=-w[12],
            w13=w[13],
            w14=w[14],
            forget_divisor=e ** (w[17] * w[18]),
            neg_w19=-w[19],
            interval_scale=(desired_retention ** (1 / decay)) - 1,
        )


@dataclass(frozen=True, slots=True)
class MemoryFold:
    """`Scheduler.review_card` for `policy`, folded over a node's probes (see the module)."""

    policy: MemoryPolicy = field(default_factory=MemoryPolicy)
    _c: _Constants = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_c", _Constants.of(self.policy.parameters, self.policy.desired_retention)
        )

    def fold(self, probes: Sequence[Answered], card: MemoryCard | None = None) -> MemoryCard | None:
        """`card` (None: a new card) after reviewing `probes`, which must be in time order
        and no earlier than `card.last_review`.

        The hot loop of a cold read: the rating inlined as a plain int, the constants looked
        up once, and only the package's arithmetic, in its order of operations (a rating's
        term that is 1 or −0.0 is left out: that changes no bit)."""
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
        decay, factor = c.decay, c.factor
        short_term_increase, difficulty_delta = c.short_term_increase, c.difficulty_delta
        recall_bonus = c.recall_bonus
        mean_target, keep = c.mean_target, c.keep
        recall_base, neg_w9, w10 = c.recall_base, c.neg_w9, c.w10
        w11, neg_w12, w13, w14 = c.w11, c.neg_w12, c.w13, c.w14
        forget_divisor, neg_w19 = c.forget_divisor, c.neg_w19
        e = math.e
        lowest, easiest, hardest = STABILITY_MIN, MIN_DIFFICULTY, MAX_DIFFICULTY
        guessing_below, sure_from = GUESSING_BELOW, SURE_FROM
        for probe in rest:
            # `rating`, inlined: Again 1, Hard 2, Good 3, Easy 4
            if probe.correct:
                confidence = probe.confidence
                if confidence is None:
                    r = 3
                elif confidence < guessing_below:
                    r = 2
                else:
                    r = 4 if confidence >= sure_from else 3
            else:
                r = 1
            at = probe.at
            days = (at - last).days
            last = at
            if days < 1:  # `_short_term_stability`
                increase = short_term_increase[r] * (stability**neg_w19)
                if increase < 1.0 and r != 1:
                    increase = 1.0
                stability = stability * increase
            else:  # `_next_stability` at the card's retrievability
                recall = (1 + factor * days / stability) ** decay
                if r == 1:  # `_next_forget_stability`
                    long_term = (
                        w11
                        * (difficulty**neg_w12)
                        * (((stability + 1) ** (w13)) - 1)
                        * (e ** ((1 - recall) * w14))
                    )
                    short_term = stability / forget_divisor
                    stability = long_term if long_term < short_term else short_term
                else:  # `_next_recall_stability`: × hard penalty × easy bonus (1 for Good)
                    growth = (
                        recall_base
                        * (11 - difficulty)
                        * (stability**neg_w9)
                        * ((e ** ((1 - recall) * w10)) - 1)
                    )
                    if r != 3:
                        growth = growth * recall_bonus[r]
                    stability = stability * (1 + growth)
            if stability < lowest:
                stability = lowest
            # `_next_difficulty`: linear damping (none for Good), mean reversion to Easy's
            if r != 3:
                difficulty = difficulty + (10.0 - difficulty) * difficulty_delta[r] / 9.0
            difficulty = mean_target + keep * difficulty
            if difficulty < easiest:
                difficulty = easiest
            elif difficulty > hardest:
                difficulty = hardest
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
