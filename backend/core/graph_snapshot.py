"""The read model: the snapshot derived from a `GraphState`, kept up to date incrementally.

`SnapshotDeriver` follows a state through the `FoldDelta`s of `fold_into` and re-derives
only what they touched: the nodes that got a probe, a mapping or were created, the edges
that got a chat or an endpoint, the sessions when a checkpoint or mapping arrived. Its
snapshot equals `derive_snapshot(state)` from scratch (a property test holds it to that).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from operator import attrgetter

from backend.core.graph_state import EdgeKey, FoldDelta, GraphState
from shared_contracts.graph import (
    EventLine,
    GraphEdge,
    GraphNode,
    GraphSession,
    GraphSnapshot,
    GraphStats,
    NodeKind,
    NodeState,
    Probe,
)

PROBE_KINDS = frozenset({"quiz_correct", "quiz_incorrect"})
RECENT_PROBES = 2
"""Node state rule: kind misconception → misconception; else the latest `RECENT_PROBES`
probes all correct → verified, any of them incorrect → shaky; no probes → introduced, or
unseen when every chat mapped to the node only rested on it (a prerequisite)."""

_at = attrgetter("at")
_at_ref = attrgetter("at", "ref")


def node_state(
    kind: NodeKind, probes: Sequence[EventLine | Probe], *, seen: bool = True
) -> NodeState:
    """The derived state of a node from its probes in time order and whether any chat
    showed it (see `RECENT_PROBES`)."""
    if kind == "misconception":
        return "misconception"
    if not probes:
        return "introduced" if seen else "unseen"
    return "verified" if all(p.correct for p in probes[-RECENT_PROBES:]) else "shaky"


def _in_time_order(events: list[EventLine]) -> list[EventLine]:
    """`events` sorted in place by (at, ref). Sorting on `at` alone allocates no key tuples
    (cheaper, and gentler on the garbage collector); only a tie on `at` needs the refs."""
    events.sort(key=_at)
    if len(set(map(_at, events))) < len(events):
        events.sort(key=_at_ref)
    return events


def _probes(events: list[EventLine]) -> list[Probe]:
    return [
        Probe(
            at=e.at,
            chat_id=e.chat_id,
            question=e.question,
            answer=e.answer,
            expected=e.expected,
            correct=e.correct,
            confidence=e.confidence,
        )
        for e in events
    ]


class SnapshotDeriver:
    """`derive_snapshot` of one state, incrementally. Rules: call `apply(state, delta)`
    with every delta `fold_into` returned for that state, in order; `snapshot(state)` then
    equals `derive_snapshot(state)` and costs O(what changed) plus list copies. Lists it
    hands out are never mutated afterwards (snapshots share the unchanged ones)."""

    def __init__(self) -> None:
        self._pending: defaultdict[str | None, list[EventLine]] = defaultdict(list)
        """Probe events folded but not yet placed, by node id (the node may not exist yet)."""
        self._events: dict[str, list[EventLine]] = {}  # a node's placed probes, time order
        self._chats: dict[str, list[str]] = {}  # node id → chats mapped to it, in fold order
        self._rested: set[str] = set()  # nodes whose every mapping is a prerequisite one
        self._per_chat: dict[str, int] = {}  # chat → nodes mapped to it
        self._nodes: dict[str, GraphNode | None] = {}  # in rank order; None: not derived
        self._counts: dict[str, int] = {}  # derived state → nodes in it
        self._edges: dict[EdgeKey, GraphEdge | None] = {}  # in fold order; None: hidden
        self._waiting: dict[str, list[EdgeKey]] = {}  # missing endpoint → its hidden edges
        self._dirty_nodes: set[str] = set()
        self._dirty_edges: set[EdgeKey] = set()
        self._probe_total = 0
        self._attributed = 0  # probes whose node exists
        self._sessions_dirty = True
        self._parts: tuple[list[GraphNode], list[GraphEdge], list[GraphSession]] = ([], [], [])
        self._last: GraphSnapshot | None = None

    def apply(self, state: GraphState, delta: FoldDelta) -> None:
        """Record what `delta` (just folded into `state`) touched; cheap, derives nothing."""
        if delta.nodes:
            self._nodes.update(dict.fromkeys(delta.nodes))
            self._dirty_nodes.update(delta.nodes)
            if self._waiting:
                for node_id in delta.nodes:
                    self._dirty_edges.update(self._waiting.pop(node_id, ()))
        probes = [e for e in delta.events if e.kind in PROBE_KINDS]
        self._probe_total += len(probes)
        pending = self._pending
        for event in probes:
            pending[event.node_id].append(event)
        pending.pop(None, None)  # unattributed for good: counted in the total only
        nodes, mappings = state.nodes, state.mappings
        for chat_id, node_id in delta.mappings:
            chats = self._chats.get(node_id, ())
            if chat_id not in chats:  # else a prerequisite mapping was superseded
                # A new list, never an append: a node's `sessions` may be this very list.
                chats = self._chats[node_id] = [*chats, chat_id]
                self._per_chat[chat_id] = self._per_chat.get(chat_id, 0) + 1
            if not mappings[chat_id, node_id].prerequisite:
                self._rested.discard(node_id)
            elif all(mappings[c, node_id].prerequisite for c in chats):
                self._rested.add(node_id)
            if node_id in nodes:
                self._dirty_nodes.add(node_id)
        for key in delta.edges:
            self._edges.setdefault(key, None)  # its place in fold order, derived later
        self._dirty_edges.update(delta.edges)
        if delta.mappings or delta.sessions:
            self._sessions_dirty = True
        if delta.nodes or delta.events or delta.mappings or delta.edges or delta.sessions:
            self._last = None

    def snapshot(self, state: GraphState) -> GraphSnapshot:
        """The snapshot of `state` (the one every applied delta was folded into)."""
        if self._last is not None:
            return self._last
        nodes, edges, sessions = self._parts
        self._dirty_nodes.update(n for n in self._pending if n is not None and n in state.nodes)
        if self._dirty_nodes:
            nodes = self._derive_nodes(state)
        if self._dirty_edges:
            edges = self._derive_edges(state)
        if self._sessions_dirty:
            sessions = self._derive_sessions(state)
        self._parts = (nodes, edges, sessions)
        stats = GraphStats(
            nodes=len(nodes),
            edges=len(edges),
            events=len(state.events),
            sessions=len(sessions),
            by_state=self._by_state(nodes),
            unattributed_probes=self._probe_total - self._attributed,
        )
        self._last = GraphSnapshot(nodes=nodes, edges=edges, sessions=sessions, stats=stats)
        return self._last

    def _derive_nodes(self, state: GraphState) -> list[GraphNode]:
        derived, counts = self._nodes, self._counts
        for node_id in self._dirty_nodes:
            old = derived[node_id]
            new = self._node(state, node_id, old)
            if old is not None:
                counts[old.state] -= 1
                self._attributed -= len(old.probes)
            counts[new.state] = counts.get(new.state, 0) + 1
            self._attributed += len(new.probes)
            derived[node_id] = new
        self._dirty_nodes = set()
        return list(derived.values())  # type: ignore[arg-type]  # every node is derived

    def _node(self, state: GraphState, node_id: str, old: GraphNode | None) -> GraphNode:
        # Allocation-lean on purpose: a cold derive builds every node, and each container
        # allocated here feeds the garbage collector's full passes over the whole heap.
        line = state.nodes[node_id]
        if old is None:
            probes: list[Probe] = []
            correct = incorrect = 0
        else:
            probes, correct, incorrect = old.probes, old.correct, old.incorrect
        new = self._pending.pop(node_id, None)
        if new:
            new = _in_time_order(new)
            for event in new:
                if event.correct:
                    correct += 1
                elif event.correct is False:
                    incorrect += 1
            events = self._events.get(node_id)
            if events is None:
                events, probes = new, _probes(new)
            elif _at_ref(new[0]) < _at_ref(events[-1]):  # older than some: place them all
                events = _in_time_order(events + new)
                probes = _probes(events)
            else:
                events, probes = events + new, probes + _probes(new)
            self._events[node_id] = events
        chats = self._chats.get(node_id)
        if not chats:
            sessions = [line.chat_id]
        elif chats[0] == line.chat_id:  # the usual case: the creating chat is mapped first
            sessions = chats  # (mapping keys are unique, so no chat repeats)
        else:
            sessions = list(dict.fromkeys([line.chat_id, *chats]))
        return GraphNode(
            id=node_id,
            statement=line.statement,
            kind=line.kind,
            state=node_state(line.kind, probes, seen=node_id not in self._rested),
            correct=correct,
            incorrect=incorrect,
            last_probe_at=probes[-1].at if probes else None,
            sessions=sessions,
            evidence=line.evidence,  # shared, like every list here: nobody mutates it
            probes=probes,
        )

    def _derive_edges(self, state: GraphState) -> list[GraphEdge]:
        nodes, edges = state.nodes, self._edges
        for key in self._dirty_edges:
            a, b, kind = key
            if a in nodes and b in nodes:
                edges[key] = GraphEdge(from_=a, to=b, type=kind, chats=list(state.edges[key]))
                continue
            edges[key] = None
            for node_id in (a, b):
                if node_id not in nodes:
                    self._waiting.setdefault(node_id, []).append(key)
        self._dirty_edges = set()
        return [e for e in edges.values() if e is not None]

    def _derive_sessions(self, state: GraphState) -> list[GraphSession]:
        self._sessions_dirty = False
        return [
            GraphSession(
                chat_id=c.chat_id,
                folded_at=c.folded_at,
                at=c.at,
                nodes=self._per_chat.get(c.chat_id, 0),
            )
            for c in state.checkpoints.values()
        ]

    def _by_state(self, nodes: list[GraphNode]) -> dict[str, int]:
        """Counts per derived state, keyed in order of first occurrence (as from scratch)."""
        present = sum(1 for n in self._counts.values() if n)
        order: dict[str, int] = {}
        for node in nodes:
            if len(order) == present:
                break
            if node.state not in order:
                order[node.state] = self._counts[node.state]
        return order


def derive_snapshot(state: GraphState) -> GraphSnapshot:
    """The read model: nodes with derived states and probes, merged edges, sessions."""
    deriver = SnapshotDeriver()
    deriver.apply(state, FoldDelta.everything(state))
    return deriver.snapshot(state)
