"""Q4 under another rating map: each reviewed node's probes re-folded by the `fsrs` package.

The harness rates a probe from its verdict and stated confidence (`backend.core.memory`:
wrong → Again, right and guessing → Hard, right → Good, right and sure → Easy) and counts
whole days since the last review. To say what would close a Q4 miss with a measured figure,
not a guess, the bench re-folds the same probes (read from the final graph: time, verdict,
confidence) with `fsrs.Scheduler` under other maps, and predicts each review point again,
as of the same moment, with whole or fractional days.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from fsrs import Card, Rating, Scheduler

from backend.core.memory import GUESSING_BELOW, SURE_FROM
from bench.pedagogy.recall_score import ReviewPoint, fractional_retrievability

RatingMap = Callable[[bool, float | None], Rating]


@dataclass(frozen=True)
class ProbeAt:
    at: datetime
    correct: bool
    confidence: float | None


def harness_map(correct: bool, confidence: float | None) -> Rating:
    """The harness's map (issue 19 item 1)."""
    if not correct:
        return Rating.Again
    if confidence is not None and confidence < GUESSING_BELOW:
        return Rating.Hard
    return Rating.Easy if confidence is not None and confidence >= SURE_FROM else Rating.Good


def no_easy_map(correct: bool, confidence: float | None) -> Rating:
    """Sure is Good too: a right answer is never Easy."""
    rated = harness_map(correct, confidence)
    return Rating.Good if rated == Rating.Easy else rated


def verdict_only_map(correct: bool, confidence: float | None) -> Rating:
    """Confidence ignored: right → Good, wrong → Again."""
    return Rating.Good if correct else Rating.Again


MAPS: dict[str, RatingMap] = {
    "harness (again/hard/good/easy by confidence)": harness_map,
    "sure is good (no easy)": no_easy_map,
    "verdict only (good/again)": verdict_only_map,
}


def _scheduler() -> Scheduler:
    return Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)


def predict(
    probes: Sequence[ProbeAt], as_of: datetime, rate: RatingMap, scheduler: Scheduler
) -> tuple[float, float, float] | None:
    """(retrievability with whole days, with fractional days, stability) as of `as_of`
    after the probes before it, or None with none."""
    card: Card | None = None
    for probe in probes:
        if probe.at >= as_of:
            break
        card = card or Card(card_id=1, due=probe.at)
        card, _ = scheduler.review_card(card, rate(probe.correct, probe.confidence), probe.at)
    if card is None or card.stability is None or card.last_review is None:
        return None
    whole = float(scheduler.get_card_retrievability(card, as_of))
    elapsed = (as_of - card.last_review).total_seconds() / 86400
    point = ReviewPoint(0.0, "", whole, float(card.stability), elapsed, True, "")
    return whole, fractional_retrievability(point), float(card.stability)


def rating_maps(
    cases: Sequence[tuple[Sequence[ProbeAt], datetime, bool, float]],
) -> dict[str, dict[str, float]]:
    """Per map: AUC and log loss of the re-folded prediction, whole and fractional days,
    over `cases` (a node's probes, the moment before the answer, the answer's verdict, the
    harness's own retrievability then). `agrees_with_harness`: the share of cases where the
    re-fold reproduces the harness's figure (1.0 for the harness's map: the check that the
    re-fold is the harness's model)."""
    from bench.pedagogy.recall_score import auc, log_loss

    scheduler = _scheduler()
    out: dict[str, dict[str, float]] = {}
    for name, rate in MAPS.items():
        whole: list[tuple[float, bool]] = []
        fractional: list[tuple[float, bool]] = []
        same = 0
        for probes, as_of, correct, harness in cases:
            found = predict(probes, as_of, rate, scheduler)
            if found is not None:
                whole.append((found[0], correct))
                fractional.append((found[1], correct))
                same += abs(found[0] - harness) < 1e-6
        out[name] = {
            "reviews": len(whole),
            "auc": auc(whole),
            "log_loss": log_loss(whole),
            "auc_fractional_days": auc(fractional),
            "log_loss_fractional_days": log_loss(fractional),
            "agrees_with_harness": same / len(whole) if whole else float("nan"),
        }
    return out
