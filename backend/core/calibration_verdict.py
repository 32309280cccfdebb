"""Whether stated confidence runs ahead of correctness, behind it, or with it: a test of the
mean signed gap between stated confidence and correctness (1 right, 0 wrong).

- `too_few_answers` below `MIN_ANSWERS` (10) answers with a confidence;
- `overconfident` when the mean gap is at least `MIN_GAP` (0.10) *and* at least `Z` (2)
  standard errors above zero; `underconfident` symmetrically below; else `calibrated`.

The UI offers three levels (0.25 "Guessing", 0.6 "Fairly", 0.9 "Sure"), so its extremes are
open-ended: a learner who is right every time can say no more than 0.9, one who has no idea
no less than 0.25. A right "sure" answer and a wrong "guessing" one therefore count a gap of
0 (as calibrated as the UI lets one be), not −0.1 and +0.25; otherwise a learner who knows
nearly everything would read as underconfident.

Measured on learners answering as the pedagogy bench's simulated ones do (confidence = the
chance of being right + a profile bias of 0 / +0.45 / −0.4 + noise, snapped to the UI's
levels, 10 % unsaid; 300 learners per case, 30–60 answers). A calibrated learner is flagged
in 0–10 % of cases (≤ 5 % but where many items sit between the UI's levels). An
overconfident one is flagged in 87–100 % of cases when a third or more of its items are ones
it does not know well, 56–75 % when a fifth, ≈ 15 % when it knows nearly everything (then
there is little to be overconfident about). An underconfident one in 96–100 %. Without the
open ends, a calibrated learner who knows most answers read as underconfident in up to
21 % of cases; testing each level against its band of probabilities instead caught only
24–59 % of overconfident learners.
`tests/unit/test_calibration.py` repeats the first measurement with a seeded population.
"""

from __future__ import annotations

import math

from backend.core.memory import confidence_band
from shared_contracts.learner import CalibrationVerdict

MIN_ANSWERS = 10
MIN_GAP = 0.10
Z = 2.0


def gap(confidence: float, right: float) -> float:
    """Stated confidence minus correctness, 0 at the UI's open ends (see the module)."""
    band = confidence_band(confidence)
    if (band == "sure" and right) or (band == "guessing" and not right):
        return 0.0
    return confidence - right


def verdict(rated: list[tuple[float, float]]) -> CalibrationVerdict:
    """The verdict over (confidence, 1 right / 0 wrong) pairs (see the module)."""
    n = len(rated)
    if n < MIN_ANSWERS:
        return "too_few_answers"
    gaps = [gap(c, y) for c, y in rated]
    mean = sum(gaps) / n
    spread = math.sqrt(sum((g - mean) ** 2 for g in gaps) / (n - 1))
    if spread == 0.0:  # every answer the same gap: as certain as the data can be
        z = math.copysign(math.inf, mean) if mean else 0.0
    else:
        z = mean / (spread / math.sqrt(n))
    if mean >= MIN_GAP and z >= Z:
        return "overconfident"
    if mean <= -MIN_GAP and z <= -Z:
        return "underconfident"
    return "calibrated"
