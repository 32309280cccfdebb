"""A node's derived state from its evidence: the rules, as pure functions.

Propositions: no probes → `introduced`, or `unseen` when every chat mapped to the node only
rested on it. Else the latest `RECENT_PROBES` probes decide: any wrong → `shaky`; all right
→ `verified`, unless every one of them was marked "guessing" (a right guess is weak
evidence: alone it never verifies, so the node stays `introduced`); a verified node whose
recall has dropped below the desired retention is `fading`.

Misconceptions: `misconception` while open, `resolved` once a probe of the node rejects the
belief unaided in a later session (`resolving_probe`); a wrong answer to a later probe of
it shows the belief again and reopens it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import TypeVar

from backend.core.fsrs_review import Answered
from backend.core.memory import GUESSING_BELOW, confidence_band
from shared_contracts.graph import EventLine, NodeKind, NodeState, PropositionLine, Resolution

RECENT_PROBES = 2


def is_guess(probe: Answered) -> bool:
    """A probe the learner marked as a guess (`memory.GUESSING_BELOW`)."""
    return confidence_band(probe.confidence) == "guessing"


def node_state(
    kind: NodeKind,
    probes: Sequence[Answered],
    *,
    seen: bool = True,
    fading: bool = False,
    resolved: bool = False,
) -> NodeState:
    """The derived state of a node from its probes in time order (see the module)."""
    if kind == "misconception":
        return "resolved" if resolved else "misconception"
    if not probes:
        return "introduced" if seen else "unseen"
    recent = probes[-RECENT_PROBES:]
    for probe in recent:
        if not probe.correct:
            return "shaky"
    for probe in recent:  # `is_guess`, inlined: this runs for every node a snapshot derives
        confidence = probe.confidence
        if confidence is None or confidence >= GUESSING_BELOW:
            return "fading" if fading else "verified"
    return "introduced"


class Lessons:
    """A node's `taught` events, indexed so `aided` is O(1): the earliest lesson per chat,
    per chat with an unknown turn, and per (chat, turn)."""

    def __init__(self, taught: Iterable[EventLine]) -> None:
        self._any: dict[str, datetime] = {}
        self._unknown_turn: dict[str, datetime] = {}
        self._by_turn: dict[tuple[str, int], datetime] = {}
        for lesson in taught:
            _earliest(self._any, lesson.chat_id, lesson.at)
            if isinstance(lesson.turn, int):
                _earliest(self._by_turn, (lesson.chat_id, lesson.turn), lesson.at)
            else:
                _earliest(self._unknown_turn, lesson.chat_id, lesson.at)

    def aided(self, probe: EventLine) -> bool:
        """Whether the teacher (re)taught the probed node before this answer in its turn: a
        `taught` event of the node in the same chat, no later than the probe, in the same
        turn (in the same chat at all when either turn was not recorded)."""
        chat, at = probe.chat_id, probe.at
        if not isinstance(probe.turn, int):
            return _no_later(self._any.get(chat), at)
        return _no_later(self._unknown_turn.get(chat), at) or _no_later(
            self._by_turn.get((chat, probe.turn)), at
        )


K = TypeVar("K")


def _earliest(index: dict[K, datetime], key: K, at: datetime) -> None:
    known = index.get(key)
    if known is None or at < known:
        index[key] = at


def _no_later(lesson_at: datetime | None, at: datetime) -> bool:
    return lesson_at is not None and lesson_at <= at


def resolving_probe(
    line: PropositionLine, probes: Sequence[EventLine], taught: Sequence[EventLine] = ()
) -> EventLine | None:
    """The probe that resolved misconception `line`, or None while it is open.

    The belief was last shown by the node's creation (its chat, its time) or by the latest
    wrong answer to a probe of it. A right answer resolves it when it comes from another
    chat than that showing, later in time, not marked "guessing" and not aided
    (`Lessons.aided`). A later wrong answer reopens it. `probes` are in time order."""
    return _Scan(line.chat_id, line.created_at).over(probes, taught).resolved


@dataclass(slots=True)
class _Scan:
    """Where `resolving_probe`'s walk over a node's probes stands."""

    shown_chat: str
    shown_at: datetime
    resolved: EventLine | None = None
    scanned: int = 0

    def over(self, probes: Sequence[EventLine], taught: Sequence[EventLine]) -> _Scan:
        """Walk on over `probes[self.scanned:]` (the ones before were walked already)."""
        lessons: Lessons | None = None
        for probe in islice(probes, self.scanned, None):
            if not probe.correct:
                self.shown_chat, self.shown_at, self.resolved = probe.chat_id, probe.at, None
            elif (
                self.resolved is None
                and probe.chat_id != self.shown_chat
                and probe.at > self.shown_at
                and not is_guess(probe)
            ):
                lessons = lessons or Lessons(taught)
                if not lessons.aided(probe):
                    self.resolved = probe
        self.scanned = len(probes)
        return self


class Resolutions:
    """`resolving_probe` of each misconception as its probes grow, resumed where the last
    walk stopped while its probes were only appended to (the same list, longer) and no
    lesson of it came since; otherwise walked again from the start."""

    def __init__(self) -> None:
        self._scans: dict[str, tuple[Sequence[EventLine], int, _Scan]] = {}

    def resolving_probe(
        self, line: PropositionLine, probes: Sequence[EventLine], taught: Sequence[EventLine]
    ) -> EventLine | None:
        known = self._scans.get(line.id)
        if known is not None and known[0] is probes and known[1] == len(taught):
            scan = known[2]
        else:
            scan = _Scan(line.chat_id, line.created_at)
        self._scans[line.id] = (probes, len(taught), scan.over(probes, taught))
        return scan.resolved


def resolution(probe: EventLine | None) -> Resolution | None:
    """What a resolved node shows: when and by which question."""
    if probe is None:
        return None
    return Resolution(
        at=probe.at,
        chat_id=probe.chat_id,
        question=probe.question,
        answer=probe.answer,
        tool_call_id=probe.tool_call_id,
    )
