"""The run's outputs: the table, `bench/pedagogy.json`, and the retention plot (PNG)."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.pedagogy.scores import Score

POLICY_STYLE = {
    "harness": ("harness (the reviews home offers)", "tab:red", "-"),
    "fixed": ("fixed intervals 1, 3, 7, 14, 30 d", "tab:blue", "--"),
    "none": ("no review", "tab:gray", ":"),
}


def table(scores: Sequence[Score]) -> str:
    """One row per score (value, goal, PASS / MISSED / N/A), then each score's note."""
    header = ["id", "what", "value", "goal", "ok"]
    rows = [
        [
            s.id,
            s.what,
            s.value,
            s.goal,
            ("PASS" if s.passed else "MISSED") if s.available else "N/A",
        ]
        for s in scores
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]

    def line(cells: Sequence[str]) -> str:
        return " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=False)).rstrip()

    out = [line(header), "-+-".join("-" * w for w in widths), *(line(r) for r in rows), ""]
    out += [f"{s.id}: {s.note}" for s in scores if s.note]
    return "\n".join(out)


def mean_curves(curves: dict[str, list[list[float]]]) -> dict[str, list[float]]:
    return {
        p: [statistics.fmean(day) for day in zip(*runs, strict=True)] for p, runs in curves.items()
    }


def plot(
    curves: dict[str, list[list[float]]],
    reviews: dict[str, float],
    concepts: int,
    path: Path,
    title: str,
) -> None:
    """Mean concepts retained per simulated day for each policy (the mean reviews a learner
    answered in its label), with a 10–90% band across learners."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    for policy, runs in sorted(curves.items(), key=lambda item: list(POLICY_STYLE).index(item[0])):
        label, colour, style = POLICY_STYLE[policy]
        label = f"{label}: {reviews.get(policy, 0):.0f} reviews a learner"
        days = list(range(len(runs[0])))
        by_day = [sorted(day) for day in zip(*runs, strict=True)]
        ax.plot(days, [statistics.fmean(d) for d in by_day], style, color=colour, label=label)
        ax.fill_between(
            days,
            [_quantile(d, 0.1) for d in by_day],
            [_quantile(d, 0.9) for d in by_day],
            color=colour,
            alpha=0.12,
            linewidth=0,
        )
    ax.set_xlabel("simulated day")
    ax.set_ylabel(f"concepts retained (expected, of {concepts})")
    ax.set_ylim(0, concepts)
    ax.set_xlim(0, len(next(iter(curves.values()))[0]) - 1)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def _quantile(ordered: list[float], q: float) -> float:
    pos = (len(ordered) - 1) * q
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def write_json(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_clean(document), indent=1, ensure_ascii=False) + "\n")


def _clean(value: object) -> object:
    """JSON without NaN (null instead)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value
