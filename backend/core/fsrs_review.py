"""FSRS's review step, `fsrs.Scheduler.review_card`'s arithmetic over a run of reviews: the
hot loop of a cold read (bench B1, B16), so the constants are computed once per policy
(`ReviewConstants`, each by the package's own expression, so every value is equal) and the
loop takes them as locals and the rating as a plain int. `backend.core.memory.MemoryFold`
starts and ends a card around it; `tests/unit/test_memory.py` holds the two equal to the
package bit for bit."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from fsrs import Rating
from fsrs.scheduler import MAX_DIFFICULTY, MIN_DIFFICULTY, STABILITY_MIN


class Answered(Protocol):
    """What a review needs from a probe (an `EventLine` or a `Probe`)."""

    @property
    def at(self) -> datetime: ...
    @property
    def correct(self) -> bool | None: ...
    @property
    def confidence(self) -> float | None: ...


@dataclass(frozen=True, slots=True)
class ReviewConstants:
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
    guessing_below: float
    sure_from: float
    """The confidence cut points of the rating (`backend.core.memory.rating`)."""

    @classmethod
    def of(
        cls,
        w: tuple[float, ...],
        desired_retention: float,
        guessing_below: float,
        sure_from: float,
    ) -> ReviewConstants:
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
            guessing_below=guessing_below,
            sure_from=sure_from,
        )


def review_all(
    c: ReviewConstants, reviews: Iterable[Answered], card: tuple[float, float, datetime]
) -> tuple[float, float, datetime]:
    """`card`'s (stability, difficulty, last review) after `reviews` (in time order): the
    package's arithmetic in its order of operations (a rating's term that is 1 or −0.0 is
    left out: that changes no bit)."""
    stability, difficulty, last = card
    decay, factor, mean_target, keep = c.decay, c.factor, c.mean_target, c.keep
    increase_by, delta_by, bonus_by = c.short_term_increase, c.difficulty_delta, c.recall_bonus
    recall_base, neg_w9, w10, w11, neg_w12 = c.recall_base, c.neg_w9, c.w10, c.w11, c.neg_w12
    w13, w14, forget_by, neg_w19 = c.w13, c.w14, c.forget_divisor, c.neg_w19
    e, lowest, easiest, hardest = math.e, STABILITY_MIN, MIN_DIFFICULTY, MAX_DIFFICULTY
    guessing_below, sure_from = c.guessing_below, c.sure_from
    for review in reviews:
        # `rating`, inlined: Again 1, Hard 2, Good 3, Easy 4
        if not review.correct:
            r = 1
        elif (confidence := review.confidence) is None:
            r = 3
        else:
            r = 2 if confidence < guessing_below else 4 if confidence >= sure_from else 3
        at = review.at
        days = (at - last).days
        last = at
        if days < 1:  # `_short_term_stability`
            increase = increase_by[r] * (stability**neg_w19)
            if increase < 1.0 and r != 1:
                increase = 1.0
            stability = stability * increase
        else:  # `_next_stability` at the card's retrievability
            recall = (1 + factor * days / stability) ** decay
            if r == 1:  # `_next_forget_stability` (left to right, as the package's product)
                long_term = w11 * (difficulty**neg_w12) * (((stability + 1) ** (w13)) - 1)
                long_term = long_term * (e ** ((1 - recall) * w14))
                short_term = stability / forget_by
                stability = long_term if long_term < short_term else short_term
            else:  # `_next_recall_stability`: × hard penalty × easy bonus (1 for Good)
                growth = recall_base * (11 - difficulty) * (stability**neg_w9)
                growth = growth * ((e ** ((1 - recall) * w10)) - 1)
                if r != 3:
                    growth = growth * bonus_by[r]
                stability = stability * (1 + growth)
        if stability < lowest:
            stability = lowest
        # `_next_difficulty`: linear damping (none for Good), mean reversion to Easy's
        if r != 3:
            difficulty = difficulty + (10.0 - difficulty) * delta_by[r] / 9.0
        difficulty = mean_target + keep * difficulty
        if difficulty < easiest:
            difficulty = easiest
        elif difficulty > hardest:
            difficulty = hardest
    return stability, difficulty, last
