"""The measuring kit every benchmark shares: interleaved rounds, statistics, goals, results.

A benchmark measures its floor and its subject in the same run, alternating which goes
first each round (so a drifting machine biases neither), and reports the median of the
per-round ratios and their p99. Goals are checks on those figures; a failed check fails
the run (after everything was printed).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100) with linear interpolation; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def median(values: Sequence[float]) -> float:
    """The median; NaN for no values."""
    return statistics.median(values) if values else math.nan


def interleave(
    rounds: int, floor: Callable[[], float], subject: Callable[[], float]
) -> tuple[list[float], list[float]]:
    """Run `floor` and `subject` once per round, alternating which runs first."""
    floors: list[float] = []
    subjects: list[float] = []
    for index in range(rounds):
        if index % 2 == 0:
            floors.append(floor())
            subjects.append(subject())
        else:
            subjects.append(subject())
            floors.append(floor())
    return floors, subjects


async def ainterleave(
    rounds: int,
    floor: Callable[[], Awaitable[float]],
    subject: Callable[[], Awaitable[float]],
) -> tuple[list[float], list[float]]:
    """`interleave` for coroutine functions (run inside one event loop)."""
    floors: list[float] = []
    subjects: list[float] = []
    for index in range(rounds):
        if index % 2 == 0:
            floors.append(await floor())
            subjects.append(await subject())
        else:
            subjects.append(await subject())
            floors.append(await floor())
    return floors, subjects


@dataclass(frozen=True)
class Check:
    """One goal: `0 <= value <= limit` (NaN fails; a negative figure is noise, not a pass)."""

    name: str
    value: float
    limit: float

    @property
    def passed(self) -> bool:
        return not math.isnan(self.value) and 0.0 <= self.value <= self.limit


@dataclass
class Result:
    """One benchmark row: per-round floor and subject values in `unit`, and its goals."""

    id: str
    what: str
    unit: str
    floor_label: str
    floor: list[float] = field(default_factory=list)
    subject: list[float] = field(default_factory=list)
    subject_samples: list[float] = field(default_factory=list)
    """Pooled per-sample values (e.g. every turn's latency) when there are any."""
    goal: str = ""
    checks: list[Check] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    runnable: bool = True
    note: str = ""

    @property
    def ratios(self) -> list[float]:
        return [s / f if f else math.nan for f, s in zip(self.floor, self.subject, strict=False)]

    @property
    def ratio_median(self) -> float:
        return median(self.ratios)

    @property
    def ratio_p99(self) -> float:
        return percentile(self.ratios, 99)

    @property
    def subject_p99(self) -> float:
        return percentile(self.subject_samples or self.subject, 99)

    @property
    def passed(self) -> bool:
        return self.runnable and all(c.passed for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "what": self.what,
            "unit": self.unit,
            "floor_label": self.floor_label,
            "floor": self.floor,
            "subject": self.subject,
            "floor_median": median(self.floor),
            "subject_median": median(self.subject),
            "subject_p99": self.subject_p99,
            "ratio_median": self.ratio_median,
            "ratio_p99": self.ratio_p99,
            "goal": self.goal,
            "checks": [
                {"name": c.name, "value": c.value, "limit": c.limit, "passed": c.passed}
                for c in self.checks
            ],
            "passed": self.passed,
            "runnable": self.runnable,
            "extra": self.extra,
            "note": self.note,
        }


def not_runnable(id: str, what: str, reason: str) -> Result:
    """A benchmark whose subject is not there yet: reported, and it fails the run."""
    return Result(id=id, what=what, unit="-", floor_label="-", runnable=False, note=reason)


def exit_code(results: Sequence[Result]) -> int:
    """0 when every benchmark ran and met its goals, else 1."""
    return 0 if results and all(r.passed for r in results) else 1


def _fmt(value: float, digits: int = 2) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def table(results: Sequence[Result]) -> str:
    """The readable table: one row per result, then its checks and notes."""
    header = ["id", "what", "floor", "subject", "unit", "ratio med", "ratio p99", "subj p99", "ok"]
    rows = []
    for r in results:
        rows.append(
            [
                r.id,
                r.what,
                _fmt(median(r.floor), 3),
                _fmt(median(r.subject), 3),
                r.unit,
                _fmt(r.ratio_median, 3),
                _fmt(r.ratio_p99, 3),
                _fmt(r.subject_p99, 3),
                ("PASS" if r.passed else "FAIL") if r.runnable else "N/A",
            ]
        )
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]

    def line(cells: Sequence[str]) -> str:
        return " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=False))

    out = [line(header), "-+-".join("-" * w for w in widths)]
    out += [line(row) for row in rows]
    out.append("")
    for r in results:
        goals = "; ".join(
            f"{c.name} {_fmt(c.value, 3)} ≤ {_fmt(c.limit, 3)} {'ok' if c.passed else 'MISSED'}"
            for c in r.checks
        )
        out.append(f"{r.id}: floor = {r.floor_label}; goal {r.goal or '-'}; {goals}")
        if r.note:
            out.append(f"    note: {r.note}")
    return "\n".join(out)
