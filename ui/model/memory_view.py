"""A node's memory and a misconception's resolution in words a learner understands: the
chance of getting it right, when it is due, when it was last checked, and which answer
cleared a mix-up up. Relative times ("in 3 days") are counted from the moment the graph
shows, not from the clock on the wall (the graph may show a past or future moment)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime

from shared_contracts.graph import Memory, Resolution
from ui.model.mathdelims import normalise_math, plain_math

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclasses.dataclass
class MemoryLine:
    label: str = ""
    value: str = ""


@dataclasses.dataclass
class ResolvedView:
    """When and by which question a misconception was cleared up."""

    when: str = ""
    question: str = ""
    answer: str = ""
    session: str = ""
    session_title: str = ""


def day(at: datetime) -> str:
    """ "2 Feb 2026"."""
    return f"{at.day} {MONTHS[at.month - 1]} {at.year}"


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def span(days: int) -> str:
    """A whole number of days in the unit a person would use: "3 days", "2 weeks"."""
    if days < 14:
        return _count(days, "day")
    if days < 60:
        return _count(days // 7, "week")
    if days < 730:
        return _count(days // 30, "month")
    return _count(days // 365, "year")


def relative(at: datetime, moment: datetime) -> str:
    """`at` seen from `moment`, by calendar day: "today", "yesterday", "3 days ago",
    "tomorrow", "in 2 weeks"."""
    days = (at.date() - moment.date()).days
    if days == 0:
        return "today"
    if days == -1:
        return "yesterday"
    if days == 1:
        return "tomorrow"
    return f"in {span(days)}" if days > 0 else f"{span(-days)} ago"


def _due(due: datetime, moment: datetime) -> str:
    when = relative(due, moment)
    if due.date() == moment.date():
        return f"today ({day(due)})"
    if due < moment:
        return f"overdue since {day(due)} ({when})"
    return f"{when} ({day(due)})"


CHANCE_LABELS = {
    "resolved": "Chance you'd still avoid the mix-up",
    "misconception": "",
}
"""The chance line's label by node state ("" leaves it out). An open mix-up has none: right
after the answer that showed it, FSRS's recall is near 100 % (the answer was just given),
which beside "misconception" reads as the opposite of the truth."""


def memory_lines(
    memory: Memory | None, moment: datetime, state: str = "verified"
) -> list[MemoryLine]:
    """What the node panel says about remembering it; nothing before a question checked it."""
    if memory is None:
        return []
    lines = []
    label = CHANCE_LABELS.get(state, "Chance you'd get it right")
    if memory.retrievability is not None and label:
        lines.append(MemoryLine(label, f"about {round(memory.retrievability * 100)}%"))
    last = f"{day(memory.last_review)} ({relative(memory.last_review, moment)})"
    lines += [
        MemoryLine("Due for review", _due(memory.due, moment)),
        MemoryLine("Last checked", f"{last}, {_count(memory.reviews, 'question')} in all"),
    ]
    return lines


def resolved_view(resolution: Resolution | None, titles: Mapping[str, str]) -> ResolvedView:
    """The question that cleared the mix-up up (an empty view while it is not resolved)."""
    if resolution is None:
        return ResolvedView()
    return ResolvedView(
        when=day(resolution.at),
        # plain words in a sentence, not typeset: $\\frac{1}{2}$ reads 1/2
        question=plain_math(normalise_math(resolution.question)),
        answer=plain_math(normalise_math(resolution.answer)),
        session=resolution.chat_id,
        session_title=titles.get(resolution.chat_id) or resolution.chat_id,
    )
