"""FSRS memory: `MemoryFold` equals the `fsrs` package's own `Scheduler.review_card` (no
steps, no fuzz) for the same review sequence, bit for bit; ratings and bands as documented."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import hypothesis.strategies as st
import pytest
from fsrs import Card, Rating, State
from hypothesis import given, settings

from backend.core.memory import (
    MemoryFold,
    MemoryPolicy,
    confidence_band,
    rating,
)

T0 = datetime(2026, 1, 1, 9, 30, tzinfo=UTC)


@dataclass(frozen=True)
class Review:
    at: datetime
    correct: bool | None
    confidence: float | None


gaps = st.one_of(
    st.integers(0, 600),  # the same lesson
    st.integers(600, 86_400 * 3),  # within days
    st.integers(86_400, 86_400 * 400),  # weeks to a year
)
reviews = st.lists(
    st.tuples(gaps, st.booleans(), st.sampled_from([None, 0.25, 0.6, 0.9, 0.0, 0.4, 0.75, 1.0])),
    min_size=1,
    max_size=12,
)
retentions = st.sampled_from([0.9, 0.8, 0.95, 0.7])


def as_reviews(drawn: list[tuple[int, bool, float | None]]) -> list[Review]:
    out, at = [], T0
    for gap, correct, confidence in drawn:
        at = at + timedelta(seconds=gap)
        out.append(Review(at, correct, confidence))
    return out


def by_the_package(policy: MemoryPolicy, sequence: list[Review]) -> Card:
    scheduler = policy.scheduler()
    card = Card(card_id=1, due=T0)  # explicit: Card() would read the wall clock
    for review in sequence:
        card, _ = scheduler.review_card(
            card, rating(review.correct, review.confidence), review_datetime=review.at
        )
    return card


@settings(max_examples=400, deadline=None)
@given(reviews, retentions, st.integers(0, 86_400 * 800))
def test_the_fold_equals_the_packages_scheduler(drawn, retention, later) -> None:
    policy = MemoryPolicy(desired_retention=retention)
    sequence = as_reviews(drawn)
    expected = by_the_package(policy, sequence)
    fold = MemoryFold(policy)
    card = fold.fold(sequence)
    assert card is not None and expected.state == State.Review
    got = (card.stability, card.difficulty, card.due, card.last_review)
    assert got == (expected.stability, expected.difficulty, expected.due, expected.last_review)
    assert card.reviews == len(sequence)
    moment = sequence[-1].at + timedelta(seconds=later)
    recall = policy.scheduler().get_card_retrievability(expected, current_datetime=moment)
    assert fold.retrievability(card, moment) == recall
    assert fold.memory(card, moment).retrievability == recall


@settings(max_examples=200, deadline=None)
@given(reviews, st.integers(0, 12))
def test_folding_in_two_parts_equals_folding_at_once(drawn, cut) -> None:
    fold = MemoryFold()
    sequence = as_reviews(drawn)
    assert fold.fold(sequence[cut:], fold.fold(sequence[:cut])) == fold.fold(sequence)


@given(st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2027, 1, 1)))
def test_retrievability_holds_until_valid_until(naive_moment) -> None:
    fold = MemoryFold()
    card = fold.fold([Review(T0, True, None)])
    assert card is not None
    moment = naive_moment.replace(tzinfo=UTC)
    until = fold.valid_until(card, moment)
    assert until > moment
    same = fold.retrievability(card, moment)
    assert fold.retrievability(card, until - timedelta(microseconds=1)) == same
    if moment >= card.last_review:
        assert fold.retrievability(card, until) < same


def test_no_probes_leave_the_card_as_it_was() -> None:
    fold = MemoryFold()
    assert fold.fold([]) is None
    card = fold.fold([Review(T0, True, 0.9)])
    assert fold.fold([], card) is card


def test_ratings_follow_verdict_and_confidence() -> None:
    assert rating(False, 0.9) == Rating.Again
    assert rating(False, None) == Rating.Again
    assert rating(True, 0.25) == Rating.Hard
    assert rating(True, None) == Rating.Good
    assert rating(True, 0.6) == Rating.Good
    assert rating(True, 0.9) == Rating.Easy


def test_confidence_bands_cut_between_the_uis_levels() -> None:
    assert [confidence_band(c) for c in (None, 0.0, 0.25, 0.39, 0.4, 0.6, 0.74)] == [
        "unsaid",
        "guessing",
        "guessing",
        "guessing",
        "fairly",
        "fairly",
        "fairly",
    ]
    assert [confidence_band(c) for c in (0.75, 0.9, 1.0)] == ["sure"] * 3


def test_a_verified_memory_fades_once_recall_drops_below_the_desired_retention() -> None:
    fold = MemoryFold(MemoryPolicy(desired_retention=0.9))
    card = fold.fold([Review(T0, True, None)])  # Good: stability ≈ 2.3 days, due in 2
    assert card is not None and card.due == T0 + timedelta(days=2)
    assert not fold.is_fading(fold.memory(card, T0 + timedelta(days=2)))
    assert fold.is_fading(fold.memory(card, T0 + timedelta(days=3)))
    assert not fold.is_fading(fold.memory(card, None))  # no moment, no fading


def test_a_bad_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="retention"):
        MemoryPolicy(desired_retention=1.0)
    with pytest.raises(ValueError, match="parameters"):
        MemoryPolicy(parameters=(1.0, 2.0))
