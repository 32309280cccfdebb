"""The rating-map what-if re-folds probes as the harness does: with the harness's own map it
gives the harness's own retrievability, so another map's figures differ by the map alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fsrs import Rating

from backend.core.memory import MemoryFold
from bench.pedagogy.whatif import (
    ProbeAt,
    harness_map,
    no_easy_map,
    predict,
    rating_maps,
    verdict_only_map,
)
from bench.pedagogy.whatif import _scheduler as scheduler

T0 = datetime(2031, 1, 6, 9, tzinfo=UTC)
PROBES = [
    ProbeAt(T0, False, 0.9),
    ProbeAt(T0 + timedelta(minutes=3), True, 0.25),
    ProbeAt(T0 + timedelta(days=2, hours=9), True, 0.9),
    ProbeAt(T0 + timedelta(days=6), True, None),
]


def test_the_harness_map_refolds_to_the_harness_memory():
    fold = MemoryFold()
    moments = [p.at for p in PROBES[1:]] + [PROBES[-1].at + timedelta(days=3, hours=5)]
    for end, moment in enumerate(moments, start=1):
        as_of = moment - timedelta(microseconds=1)  # the probes before it: PROBES[:end]
        card = fold.fold(PROBES[:end])
        found = predict(PROBES, as_of, harness_map, scheduler())
        assert card is not None and found is not None
        whole, fractional, stability = found
        assert stability == pytest.approx(card.stability)
        assert whole == pytest.approx(fold.retrievability(card, as_of))
        assert fractional <= whole + 1e-12  # the part of a day counts too
    assert predict(PROBES, T0, harness_map, scheduler()) is None  # nothing before it


def test_the_maps_differ_only_where_they_say():
    assert [harness_map(True, c) for c in (None, 0.25, 0.6, 0.9)] == [
        Rating.Good,
        Rating.Hard,
        Rating.Good,
        Rating.Easy,
    ]
    assert no_easy_map(True, 0.9) == Rating.Good and no_easy_map(True, 0.25) == Rating.Hard
    assert verdict_only_map(True, 0.25) == Rating.Good
    assert {harness_map(False, 0.9), no_easy_map(False, None), verdict_only_map(False, 0.6)} == {
        Rating.Again
    }
    later = PROBES[-1].at + timedelta(days=9)
    cases = [(PROBES, later, False, 0.0), (PROBES[:3], PROBES[3].at, True, 0.0)]
    figures = rating_maps(cases)
    assert figures["harness (again/hard/good/easy by confidence)"]["reviews"] == 2
    assert figures["harness (again/hard/good/easy by confidence)"]["auc"] == 1.0
