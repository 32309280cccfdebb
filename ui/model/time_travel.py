"""Home's time travel: the graph as it was after a past session, or as it will be in 7 or 30
days if nothing is reviewed (what will be fading then). A moment is named by a key the
select sends: "now", "in-7", "in-30" or "after-<chat id>"."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from shared_contracts.graph import GraphSession, GraphSnapshot
from ui.model.graph_view import clip
from ui.model.memory_view import day

NOW = "now"
FUTURE_DAYS = (7, 30)
AFTER = "after-"
PAST_LIMIT = 60
"""Past sessions offered, newest first: after months, hundreds would make the list a wall."""


@dataclasses.dataclass
class Moment:
    key: str = NOW
    label: str = ""


def in_days(days: int) -> str:
    return f"in-{days}"


def in_order(sessions: Sequence[GraphSession]) -> list[GraphSession]:
    """Sessions by when they were last folded into the graph, oldest first (session 1)."""
    return sorted(sessions, key=lambda s: (s.at, s.chat_id))


def moments(sessions: Sequence[GraphSession], titles: Mapping[str, str]) -> list[Moment]:
    """The select's choices: now, the future ones, then past sessions newest first."""
    choices = [Moment(NOW, "Now")]
    choices += [Moment(in_days(d), f"In {d} days, if you don't review") for d in FUTURE_DAYS]
    ordered = in_order(sessions)
    for number, session in reversed(list(enumerate(ordered, start=1))[-PAST_LIMIT:]):
        choices.append(Moment(AFTER + session.chat_id, _after(number, session, titles)))
    return choices


def _after(number: int, session: GraphSession, titles: Mapping[str, str]) -> str:
    title = clip(titles.get(session.chat_id) or session.chat_id, 40)
    return f"After session {number}: {title} ({day(session.at)})"


def as_of(key: str, sessions: Sequence[GraphSession], now: datetime) -> datetime | None:
    """The moment `key` names (None: now, which the server's clock decides; also for a key
    naming no known moment)."""
    for days in FUTURE_DAYS:
        if key == in_days(days):
            return now + timedelta(days=days)
    if key.startswith(AFTER):
        chat_id = key.removeprefix(AFTER)
        return next((s.at for s in sessions if s.chat_id == chat_id), None)
    return None


def _things(n: int) -> str:
    return "1 thing" if n == 1 else f"{n} things"


def fading_count(snapshot: GraphSnapshot) -> int:
    return sum(1 for n in snapshot.nodes if n.state == "fading")


def banner(
    key: str,
    shown: GraphSnapshot,
    sessions: Sequence[GraphSession],
    titles: Mapping[str, str],
    fading_now: int,
) -> str:
    """Which moment the graph shows, in words ("" for now)."""
    for days in FUTURE_DAYS:
        if key == in_days(days):
            when = f" ({day(shown.as_of)})" if shown.as_of else ""
            return (
                f"Your graph in {days} days{when}, if you don't review: "
                f"{_things(fading_count(shown))} will be fading ({fading_now} now)."
            )
    ordered = in_order(sessions)
    for number, session in enumerate(ordered, start=1):
        if key == AFTER + session.chat_id:
            title = titles.get(session.chat_id) or session.chat_id
            return (
                f"Your graph as it was after session {number}, “{clip(title, 60)}” "
                f"({day(session.at)}): {_things(len(shown.nodes))}."
            )
    return ""
