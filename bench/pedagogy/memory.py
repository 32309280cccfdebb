"""The simulated learner's memory: ACT-R base-level activation with the spacing rule of
Pavlik & Anderson (2005) — a power-law model that is deliberately *not* FSRS.

Every study or retrieval of a concept leaves a trace j at time t_j with a weight w_j.
Ages are counted in half-hours (`AGE_UNIT`, at least 1, so no term exceeds its weight and
massed practice cannot run away). A concept's activation at time t (in days) is

    m(t) = ln( Σ_j w_j · max((t − t_j) / AGE_UNIT, 1)^(−d_j) ) + offset

and its recall probability σ((m(t) − THRESHOLD) / NOISE). Each trace's own decay depends
on how active the concept was when the trace was laid: d_j = decay + SPACING · e^{m(t_j)}
(the first trace: d = decay). Massed practice therefore decays fast and spaced practice
lasts — the spacing effect, without any notion of FSRS's stability or difficulty.
`offset` (per concept and learner) is the concept's "stability" and `decay` its rate;
both carry noise, drawn once per learner (see `learner.Parameters`).

With the defaults (offset 0, decay 0.5) a concept learned in a lesson and checked once is
recalled with p ≈ 0.95 after a day, 0.47 after a week and 0.03 after 60 days; reviewed 1,
3, 7, 14 and 30 days after the lesson, with p ≈ 0.73 at day 60 (`test_memory`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

AGE_UNIT = 1 / 48
"""Half an hour, in days: ages are counted in these, and a younger trace counts as one."""
THRESHOLD = -2.6
NOISE = 0.35
SPACING = 0.2


@dataclass(frozen=True)
class Trace:
    at: float
    decay: float
    weight: float


@dataclass
class Memory:
    """The traces of one concept for one learner."""

    decay: float
    offset: float
    traces: list[Trace] = field(default_factory=list)

    def activation(self, at: float) -> float:
        total = sum(
            t.weight * max((at - t.at) / AGE_UNIT, 1.0) ** (-t.decay)
            for t in self.traces
            if t.at <= at
        )
        return math.log(total) + self.offset if total > 0 else -math.inf

    def recall(self, at: float) -> float:
        """The probability of retrieving the concept at `at` (0 with no trace)."""
        m = self.activation(at)
        if m == -math.inf:
            return 0.0
        return 1.0 / (1.0 + math.exp(-(m - THRESHOLD) / NOISE))

    def add(self, at: float, weight: float) -> None:
        """A study or retrieval at `at`: a new trace, decaying by how active the concept is."""
        m = self.activation(at)
        decay = self.decay + (SPACING * math.exp(m) if m > -math.inf else 0.0)
        self.traces.append(Trace(at=at, decay=decay, weight=weight))
