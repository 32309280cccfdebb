"""Choosing an offline artifact by the words of a brief."""

from __future__ import annotations

import re

WAVE = ("wave", "sine", "frequenc", "oscillat", "pendulum", "trig", "amplitude", "period")
GROWTH = ("interest", "compound", "exponential", "growth", "population", "decay", "doubling")
CHANCE = ("probab", "coin", "dice", "chance", "random", "odds", "statistic")
TREE = ("tree", "hierarch", "plan", "depend", "prerequisite", "structure", "taxonomy")
FLOW = ("cycle", "loop", "process", "step", "stage", "flow", "pipeline", "sequence")
PLOT = ("graph", "curve", "function", "plot", "chart", "parabola", *WAVE, *GROWTH)

_STOP = set(
    """a an and are as at be by for from how in into is it of on or show that the this to
    what when where which why with draw diagram make build demo visual learner about
    explain have has does do same value can its their there""".split()  # noqa: SIM905
)


def mentions(text: str, words: tuple[str, ...]) -> bool:
    """True when any word stem in `words` occurs in `text` (case-insensitive)."""
    low = text.lower()
    return any(w in low for w in words)


def key_terms(text: str, limit: int = 5) -> list[str]:
    """Up to `limit` distinct content words of `text`, in order of appearance."""
    seen: dict[str, None] = {}
    for word in re.findall(r"[A-Za-z][A-Za-z'-]{2,}", text):
        if word.lower() not in _STOP:
            seen.setdefault(word.lower(), None)
    return list(seen)[:limit]


def steps_of(text: str, limit: int = 5) -> list[str]:
    """The steps a brief spells out ("a -> b -> c", "a, then b, then c"), if any."""
    parts = re.split(r"\s*(?:->|→|=>|;|,|\bthen\b)\s*", text)
    steps = [p.strip(" .") for p in parts if p.strip(" .")]
    return steps[:limit] if len(steps) >= 2 else []


def clip(text: str, width: int = 24) -> str:
    """`text` cut to `width` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"
