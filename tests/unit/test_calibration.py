"""Calibration: the figures, each verdict, and the verdict rates on a seeded population
answering like the pedagogy bench's simulated learners."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from backend.core.calibration import calibration
from backend.core.calibration_verdict import MIN_ANSWERS, gap, verdict

T0 = datetime(2026, 1, 1, tzinfo=UTC)
LEVELS = (0.25, 0.6, 0.9)
BIAS = {"calibrated": 0.0, "overconfident": 0.45, "underconfident": -0.4}


@dataclass(frozen=True)
class Answer:
    correct: bool | None
    confidence: float | None
    at: datetime = T0


def answers(pairs: list[tuple[bool, float | None]]) -> list[Answer]:
    return [Answer(correct, confidence) for correct, confidence in pairs]


def test_the_figures_cover_only_graded_answers_with_a_confidence() -> None:
    got = calibration(
        [*answers([(True, 0.9), (False, 0.6), (True, None)]), Answer(None, 0.9)],
    )
    assert got.answers == 2
    assert got.accuracy == 0.5
    assert got.mean_confidence == pytest.approx(0.75)
    assert got.brier == pytest.approx(((0.9 - 1) ** 2 + 0.6**2) / 2)
    assert got.verdict == "too_few_answers"


def test_no_answers_is_too_few_and_has_no_figures() -> None:
    got = calibration([])
    assert (got.answers, got.brier, got.accuracy, got.verdict) == (0, None, None, "too_few_answers")


def test_answers_after_as_of_are_left_out() -> None:
    late = Answer(False, 0.9, T0 + timedelta(days=1))
    assert calibration([Answer(True, 0.9), late], as_of=T0).answers == 1


def test_sure_and_wrong_again_and_again_is_overconfident() -> None:
    pairs = [(False, 0.9)] * 6 + [(True, 0.9)] * 6
    assert calibration(answers(pairs)).verdict == "overconfident"


def test_guessing_but_right_again_and_again_is_underconfident() -> None:
    pairs = [(True, 0.25)] * 8 + [(True, 0.6)] * 4
    assert calibration(answers(pairs)).verdict == "underconfident"


def test_sure_and_right_is_calibrated_though_the_ui_stops_at_0_9() -> None:
    assert gap(0.9, 1.0) == 0.0 and gap(0.25, 0.0) == 0.0 and gap(0.6, 1.0) == pytest.approx(-0.4)
    pairs = [(True, 0.9)] * 12 + [(False, 0.25)] * 3 + [(True, 0.6), (False, 0.6)]
    assert calibration(answers(pairs)).verdict == "calibrated"


def test_below_min_answers_there_is_no_verdict() -> None:
    pairs = [(False, 0.9)] * (MIN_ANSWERS - 1)
    assert verdict([(0.9, 0.0)] * (MIN_ANSWERS - 1)) == "too_few_answers"
    assert calibration(answers(pairs)).verdict == "too_few_answers"
    assert calibration(answers([*pairs, (False, 0.9)])).verdict == "overconfident"


def simulated(profile: str, rng: random.Random, n: int) -> list[tuple[float, float]]:
    """A learner as the pedagogy bench simulates one: a third of its items it does not know
    well; confidence = chance of being right + the profile's bias + noise, snapped to the
    UI's levels (or unsaid)."""
    rated = []
    for _ in range(n):
        p = rng.choice([0.95] * 6 + [0.25] * 2 + [0.05] * 2)
        right = 1.0 if rng.random() < p else 0.0
        if rng.random() < 0.1:
            continue
        felt = p + BIAS[profile] + rng.gauss(0.0, 0.1)
        if felt >= LEVELS[0] / 2:
            rated.append((min(LEVELS, key=lambda level: abs(level - felt)), right))
    return rated


@pytest.mark.parametrize(
    ("profile", "flagged_as", "at_least", "at_most"),
    [
        ("calibrated", ("overconfident", "underconfident"), 0.0, 0.05),
        ("overconfident", ("overconfident",), 0.85, 1.0),
        ("underconfident", ("underconfident",), 0.95, 1.0),
    ],
)
def test_verdict_rates_on_a_simulated_population(profile, flagged_as, at_least, at_most) -> None:
    rng = random.Random(f"calibration:{profile}")
    verdicts = [verdict(simulated(profile, rng, 30)) for _ in range(300)]
    rate = sum(v in flagged_as for v in verdicts) / len(verdicts)
    assert at_least <= rate <= at_most
