"""The read model: the snapshot derived from a `GraphState`, kept up to date incrementally.

`SnapshotDeriver` follows a state through the `FoldDelta`s of `fold_into` and re-derives
only what they touched: the nodes that got a probe, a mapping or were created, the edges
that got a chat or an endpoint, the sessions when a checkpoint or mapping arrived. Its
snapshot equals `derive_snapshot(state)` from scratch (a property test holds it to that).

Every snapshot is *as of* a moment (`as_of`). None is the view for readers that predate the
learner model (a `GraphReader` given no clock; the server's and the CLI's have one): every
folded line, memory without retrievability, and neither `fading` nor `resolved` (readers
that index by state would not know them); once every reader passes a moment, that view
can go.
Each node with probes carries its FSRS memory (`backend.core.memory`), its card folded
incrementally like its probes. Moving `as_of` forward re-derives only the nodes whose
retrievability changed since the last snapshot: it is constant within each whole day after
a node's last review, so each derived node files when it next changes in a heap. A moment
earlier than some folded line is time travel: the past state is cut from this one
(`graph_history.state_as_of`) and derived from scratch.
"""

from __future__ import annotations

from datetime import datetime
from heapq import heapify, heappop, heappush

from backend.core.graph_history import state_as_of
from backend.core.graph_state import EdgeKey, FoldDelta, GraphState
from backend.core.learner_state import (
    RECENT_PROBES,
    Resolutions,
    node_state,
    resolution,
)
from backend.core.memory import MemoryFold, MemoryPolicy
from backend.core.placed_probes import PROBE_KINDS, PlacedProbes
from shared_contracts.graph import (
    EventLine,
    GraphEdge,
    GraphNode,
    GraphSession,
    GraphSnapshot,
    GraphStats,
    Probe,
)

__all__ = [
    "PROBE_KINDS",
    "RECENT_PROBES",
    "SnapshotDeriver",
    "derive_snapshot",
    "node_state",
]


class SnapshotDeriver:
    """`derive_snapshot` of one state, incrementally. Rules: call `apply(state, delta)`
    with every delta `fold_into` returned for that state, in order; `snapshot(state)` then
    equals `derive_snapshot(state)` and costs O(what changed) plus list copies. Lists it
    hands out are never mutated afterwards (snapshots share the unchanged ones)."""

    def __init__(self, policy: MemoryPolicy | None = None) -> None:
        self._memory = MemoryFold(policy if policy is not None else MemoryPolicy())
        self._retention = self._memory.policy.desired_retention
        self._taught: dict[str, list[EventLine]] = {}  # node id → its `taught` events
        self._as_of: datetime | None = None  # the moment node memories were derived for
        self._expiry: list[tuple[datetime, str]] = []  # heap: (retrievability changes, node)
        self._valid_until: dict[str, datetime] = {}  # node → its live entry in `_expiry`
        self._probes = PlacedProbes(self._memory)
        self._resolutions = Resolutions()  # misconceptions' walks, resumed as probes come
        self._chats: dict[str, list[str]] = {}  # node id → chats mapped to it, in fold order
        self._rested: set[str] = set()  # nodes whose every mapping is a prerequisite one
        self._per_chat: dict[str, int] = {}  # chat → nodes mapped to it
        self._nodes: dict[str, GraphNode | None] = {}  # in rank order; None: not derived
        self._counts: dict[str, int] = {}  # derived state → nodes in it
        self._edges: dict[EdgeKey, GraphEdge | None] = {}  # in fold order; None: hidden
        self._waiting: dict[str, list[EdgeKey]] = {}  # missing endpoint → its hidden edges
        self._dirty_nodes: set[str] = set()
        self._dirty_edges: set[EdgeKey] = set()
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
        for event in self._probes.add(delta.events):
            taught = event.node_id
            if taught is None:
                continue
            self._taught.setdefault(taught, []).append(event)
            if taught in state.nodes and state.nodes[taught].kind == "misconception":
                self._dirty_nodes.add(taught)
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

    @property
    def policy(self) -> MemoryPolicy:
        return self._memory.policy

    def snapshot(self, state: GraphState, as_of: datetime | None = None) -> GraphSnapshot:
        """The snapshot of `state` (the one every applied delta was folded into) as of
        `as_of`: incremental while `as_of` is no earlier than every folded line, else the
        past derived from scratch (not cached)."""
        if as_of is not None and state.latest is not None and as_of < state.latest:
            return derive_snapshot(state_as_of(state, as_of), as_of, self.policy)
        if as_of != self._as_of:
            self._move_to(as_of)
        if self._last is not None:
            return self._last
        nodes, edges, sessions = self._parts
        self._dirty_nodes.update(n for n in self._probes.pending if n in state.nodes)
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
            unattributed_probes=self._probes.total - self._attributed,
        )
        self._last = GraphSnapshot(
            nodes=nodes, edges=edges, sessions=sessions, stats=stats, as_of=self._as_of
        )
        return self._last

    def _move_to(self, as_of: datetime | None) -> None:
        """Mark the nodes whose retrievability differs at `as_of` (all, going back)."""
        old, self._as_of, self._last = self._as_of, as_of, None
        if old is None or as_of is None or as_of < old:
            self._dirty_nodes.update(self._probes.cards)
            self._expiry, self._valid_until = [], {}
            return
        expiry, valid_until = self._expiry, self._valid_until
        while expiry and expiry[0][0] <= as_of:
            moment, node_id = heappop(expiry)
            if valid_until.get(node_id) == moment:  # else a stale entry
                del valid_until[node_id]
                self._dirty_nodes.add(node_id)

    def _derive_nodes(self, state: GraphState) -> list[GraphNode]:
        derived, counts = self._nodes, self._counts
        filed: list[tuple[datetime, str]] = []  # nodes whose memory was evaluated at as_of
        for node_id in self._dirty_nodes:
            old = derived[node_id]
            new = self._node(state, node_id, old, filed)
            if old is not None:
                counts[old.state] -= 1
                self._attributed -= len(old.probes)
            counts[new.state] = counts.get(new.state, 0) + 1
            self._attributed += len(new.probes)
            derived[node_id] = new
        self._dirty_nodes = set()
        self._file(filed)
        return list(derived.values())  # type: ignore[arg-type]  # every node is derived

    def _file(self, filed: list[tuple[datetime, str]]) -> None:
        """Enter when each re-derived node's retrievability next changes."""
        if not filed:
            return
        self._valid_until.update((node_id, moment) for moment, node_id in filed)
        if len(filed) > len(self._expiry):
            self._expiry.extend(filed)
            heapify(self._expiry)
        else:
            for entry in filed:
                heappush(self._expiry, entry)

    def _node(
        self,
        state: GraphState,
        node_id: str,
        old: GraphNode | None,
        filed: list[tuple[datetime, str]],
    ) -> GraphNode:
        # Allocation-lean on purpose: a cold derive builds every node, and each container
        # allocated here feeds the garbage collector's full passes over the whole heap.
        line = state.nodes[node_id]
        if old is None:
            probes: list[Probe] = []
            correct = incorrect = 0
        else:
            probes, correct, incorrect = old.probes, old.correct, old.incorrect
        placed = self._probes
        probes, correct, incorrect = placed.place(node_id, probes, correct, incorrect)
        chats = self._chats.get(node_id)
        if not chats:
            sessions = [line.chat_id]
        elif chats[0] == line.chat_id:  # the usual case: the creating chat is mapped first
            sessions = chats  # (mapping keys are unique, so no chat repeats)
        else:
            sessions = list(dict.fromkeys([line.chat_id, *chats]))
        memory, fading = None, False
        card = placed.cards.get(node_id)
        if card is not None:
            memory, valid_until = self._memory.view(card, self._as_of)
            recall = memory.retrievability
            if valid_until is not None:
                filed.append((valid_until, node_id))
            fading = recall is not None and recall < self._retention
        resolved = None
        if line.kind == "misconception" and self._as_of is not None:
            taught = self._taught.get(node_id, ())
            probed = placed.events.get(node_id, ())
            resolved = resolution(self._resolutions.resolving_probe(line, probed, taught))
        return GraphNode(
            id=node_id,
            statement=line.statement,
            kind=line.kind,
            state=node_state(
                line.kind,
                probes,
                seen=node_id not in self._rested,
                fading=fading,
                resolved=resolved is not None,
            ),
            correct=correct,
            incorrect=incorrect,
            last_probe_at=probes[-1].at if probes else None,
            sessions=sessions,
            evidence=line.evidence,  # shared, like every list here: nobody mutates it
            probes=probes,
            memory=memory,
            resolution=resolved,
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


def derive_snapshot(
    state: GraphState, as_of: datetime | None = None, policy: MemoryPolicy | None = None
) -> GraphSnapshot:
    """The read model as of `as_of`: nodes with derived states, probes and memory, merged
    edges, sessions (see the module)."""
    if as_of is not None:
        state = state_as_of(state, as_of)
    deriver = SnapshotDeriver(policy)
    deriver.apply(state, FoldDelta.everything(state))
    return deriver.snapshot(state, as_of)
