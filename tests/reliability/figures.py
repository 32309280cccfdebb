"""Printing the figures each reliability test measures (visible with `-s`, and in the log)."""

from __future__ import annotations

import statistics


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0–100) by nearest rank; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def table(title: str, rows: list[tuple[str, object]]) -> str:
    """A two-column table, printed and returned."""
    width = max(len(name) for name, _ in rows)
    lines = [f"== {title} ==", *(f"  {name:<{width}}  {value}" for name, value in rows)]
    text = "\n".join(lines)
    print("\n" + text, flush=True)
    return text


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else 0.0
