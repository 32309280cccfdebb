"""Each node's probes placed in time order, with their `Probe`s and FSRS card, incrementally.

`SnapshotDeriver` hands every folded event to `PlacedProbes.add` in ledger order and asks
`place` for a node's probes when it derives that node. Two things keep a cold read cheap:

- A probe's `Probe` is built in `add`, in ledger order, while its line and the strings it
  refers to sit next to each other in memory (the decoder allocated them together). Built
  node by node later, each one reads scattered lines: ≈ 3× the time for the 73k probes of
  the bench graph (B1), almost all of it cache misses.
- Ledger lines mostly arrive in time order, so a node's new probes usually need no sort,
  and later ones than its placed probes extend them: the card folds on from where it was.
  Any other order places them all again, from scratch (the same result, as tests hold).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from operator import attrgetter, eq, lt

from backend.core.memory import MemoryCard, MemoryFold
from shared_contracts.graph import EventLine, Probe

PROBE_KINDS = frozenset({"quiz_correct", "quiz_incorrect"})

_at = attrgetter("at")
_at_ref = attrgetter("at", "ref")
_correct = attrgetter("correct")


def in_time_order(events: list[EventLine]) -> list[EventLine]:
    """`events` sorted in place by (at, ref). Sorting on `at` alone allocates no key tuples
    (cheaper, and gentler on the garbage collector); only a tie on `at` needs the refs, and
    after that sort any tie sits next to its twin."""
    events.sort(key=_at)
    moments = list(map(_at, events))
    if any(map(eq, moments, moments[1:])):
        events.sort(key=_at_ref)
    return events


def probe_of(event: EventLine) -> Probe:
    return Probe(
        at=event.at,
        chat_id=event.chat_id,
        question=event.question,
        answer=event.answer,
        expected=event.expected,
        correct=event.correct,
        confidence=event.confidence,
    )


def probes_of(events: list[EventLine]) -> list[Probe]:
    return list(map(probe_of, events))


class PlacedProbes:
    """Probe events by node: folded but not yet placed (`pending`), and placed in time
    order (`events`) with the FSRS card of those (`cards`)."""

    def __init__(self, memory: MemoryFold) -> None:
        self._memory = memory
        self.pending: defaultdict[str, list[EventLine]] = defaultdict(list)
        """Probe events folded but not yet placed, by node id (the node may not exist yet)."""
        self._made: defaultdict[str, list[Probe]] = defaultdict(list)  # their Probes, same order
        self.events: dict[str, list[EventLine]] = {}  # a node's placed probes, time order
        self.cards: dict[str, MemoryCard] = {}  # node id → FSRS card of its placed probes
        self.total = 0
        """Probe events folded, unattributed ones (no node id) included."""

    def add(self, events: Iterable[EventLine]) -> list[EventLine]:
        """File the probe events among `events` (in ledger order) under their nodes; the
        `taught` events among them, in order."""
        pending, made, lessons, probe_kinds = self.pending, self._made, [], PROBE_KINDS
        total = 0
        for event in events:  # one pass: the ledger's largest file
            kind = event.kind
            if kind in probe_kinds:
                total += 1
                node_id = event.node_id
                if node_id is not None:  # else unattributed for good: counted in the total
                    pending[node_id].append(event)
                    made[node_id].append(  # `probe_of`, inlined: a call a probe costs ≈ 1 %
                        Probe(
                            at=event.at,
                            chat_id=event.chat_id,
                            question=event.question,
                            answer=event.answer,
                            expected=event.expected,
                            correct=event.correct,
                            confidence=event.confidence,
                        )
                    )
            elif kind == "taught":
                lessons.append(event)
        self.total += total
        return lessons

    def place(
        self, node_id: str, probes: list[Probe], correct: int, incorrect: int
    ) -> tuple[list[Probe], int, int]:
        """A node's probes and right/wrong counts (`probes`, `correct`, `incorrect` as last
        derived) with its pending events placed; its events and card kept up to date. A
        new list when anything was pending (a snapshot may hold the old one)."""
        new = self.pending.pop(node_id, None)
        if not new:
            return probes, correct, incorrect
        made = self._made.pop(node_id)
        moments = list(map(_at, made))
        if not all(map(lt, moments, moments[1:])):  # else already in (at, ref) order
            new = in_time_order(new)
            made = probes_of(new)
        verdicts = list(map(_correct, made))  # True, False or None (ungraded)
        correct += verdicts.count(True)
        incorrect += verdicts.count(False)
        events = self.events.get(node_id)
        card = self.cards.get(node_id)  # its `last_review` is the last placed probe's `at`
        if events is None or card is None:
            events, probes = new, made
            card = self._memory.fold(made)
        elif made[0].at <= card.last_review and _at_ref(new[0]) < _at_ref(events[-1]):
            # older than some placed probe: place them all
            events = in_time_order(events + new)
            probes = probes_of(events)
            card = self._memory.fold(probes)
        else:  # the usual case: all later than the placed ones
            events.extend(new)  # this class's own list (a snapshot holds `probes`)
            probes = probes + made
            card = self._memory.fold(made, card)
        self.events[node_id] = events
        if card is not None:
            self.cards[node_id] = card
        return probes, correct, incorrect
