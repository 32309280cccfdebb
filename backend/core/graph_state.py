"""The folded graph state: ledger lines folded in, first line per key wins.

Fold is incremental and tolerant of duplicates: the first line per node id, per event ref
and per (chat, node) mapping wins (save that a chat which showed a node it had only rested
on supersedes that prerequisite mapping); edges aggregate by (from, to, type) with the chats
that asserted them; a chat's checkpoint is its last `sessions` line.

It also keeps what reading the graph *as of an earlier moment* needs (`graph_history`): when
each chat asserted each edge (`edge_times`), the prerequisite mapping a later one superseded, every
checkpoint, and `latest`, the newest moment of any folded line.

Two ways to fold: `fold` returns a new state and leaves its input alone (it copies every
dict, so it costs O(state)); `fold_into` folds in place, costs O(batch), and reports what
actually changed as a `FoldDelta` (what an incremental reader re-derives from). An
`overlay` is a state that reads through to another and records only its own additions.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Any, TypeVar

from backend.core.ports import LedgerBatch
from shared_contracts.graph import (
    EdgeLine,
    EdgeType,
    EventLine,
    MappingLine,
    NodeKind,
    PropositionLine,
    SessionCheckpoint,
)

EdgeKey = tuple[str, str, EdgeType]


K = TypeVar("K")
V = TypeVar("V")
_ABSENT: Any = object()


class Layer(MutableMapping[K, V]):
    """Writes go to its own dict; reads fall through to a base it never modifies. Lookups
    cost O(1) (cheaper than `ChainMap`'s); `len` and iteration cost O(base)."""

    __slots__ = ("base", "top")

    def __init__(self, base: Mapping[K, V]) -> None:
        self.top: dict[K, V] = {}
        self.base = base

    def __getitem__(self, key: K) -> V:
        value = self.top.get(key, _ABSENT)
        return self.base[key] if value is _ABSENT else value

    def __contains__(self, key: object) -> bool:
        return key in self.top or key in self.base

    def get(self, key: K, default: Any = None) -> Any:
        value = self.top.get(key, _ABSENT)
        return self.base.get(key, default) if value is _ABSENT else value

    def __setitem__(self, key: K, value: V) -> None:
        self.top[key] = value

    def __delitem__(self, key: K) -> None:
        raise TypeError("a Layer only grows: the base is read-only")

    def __iter__(self) -> Iterator[K]:
        yield from self.top
        yield from (key for key in self.base if key not in self.top)

    def __len__(self) -> int:
        return len(self.top) + sum(1 for key in self.base if key not in self.top)


@dataclass(slots=True)
class GraphState:
    """Everything folded from the ledgers so far. Only its owner mutates it (`fold_into`);
    everyone else treats it as immutable (`fold` returns a new state)."""

    nodes: MutableMapping[str, PropositionLine] = field(default_factory=dict)
    rank: MutableMapping[str, int] = field(default_factory=dict)
    """Creation order of each node (its position in the ledger)."""
    identity: MutableMapping[tuple[NodeKind, str], str] = field(default_factory=dict)
    edges: MutableMapping[EdgeKey, tuple[str, ...]] = field(default_factory=dict)
    events: MutableMapping[str, EventLine] = field(default_factory=dict)
    mappings: MutableMapping[tuple[str, str], MappingLine] = field(default_factory=dict)
    local: MutableMapping[tuple[str, str], str] = field(default_factory=dict)
    checkpoints: MutableMapping[str, SessionCheckpoint] = field(default_factory=dict)
    edge_since: MutableMapping[EdgeKey, datetime] = field(default_factory=dict)
    """When the first chat in `edges[key]` asserted the edge."""
    edge_later: MutableMapping[EdgeKey, tuple[datetime, ...]] = field(default_factory=dict)
    """When each later chat in `edges[key]` asserted it (same order; most edges have none)."""
    superseded: MutableMapping[tuple[str, str], MappingLine] = field(default_factory=dict)
    """(chat, node) → the prerequisite mapping a later line of that chat superseded."""
    checkpoint_history: MutableMapping[str, tuple[SessionCheckpoint, ...]] = field(
        default_factory=dict
    )
    """Every checkpoint line of a chat, in fold order (`checkpoints` holds the last)."""
    audit_lines: int = 0
    node_count: int = 0
    """How many nodes are folded (the next node's rank; `len` of an overlay is O(state))."""
    latest: datetime | None = None
    """The newest moment of any folded line (creation, event, mapping or checkpoint time)."""

    def folded_at(self, chat_id: str) -> int:
        """Messages of `chat_id` already folded (0 when never extracted)."""
        checkpoint = self.checkpoints.get(chat_id)
        return checkpoint.folded_at if checkpoint else 0

    def copy(self) -> GraphState:
        """An independent copy (O(state)): plain dicts, whatever this state's maps are."""
        return GraphState(
            nodes=dict(self.nodes),
            rank=dict(self.rank),
            identity=dict(self.identity),
            edges=dict(self.edges),
            events=dict(self.events),
            mappings=dict(self.mappings),
            local=dict(self.local),
            checkpoints=dict(self.checkpoints),
            edge_since=dict(self.edge_since),
            edge_later=dict(self.edge_later),
            superseded=dict(self.superseded),
            checkpoint_history=dict(self.checkpoint_history),
            audit_lines=self.audit_lines,
            node_count=self.node_count,
            latest=self.latest,
        )

    def overlay(self) -> GraphState:
        """A state that reads through to this one and writes only to its own (empty) layer,
        in O(1). Folding into the overlay never touches this state. Lookups only: iterating
        or taking `len` of an overlay's maps costs O(state)."""
        return GraphState(
            nodes=Layer(self.nodes),
            rank=Layer(self.rank),
            identity=Layer(self.identity),
            edges=Layer(self.edges),
            events=Layer(self.events),
            mappings=Layer(self.mappings),
            local=Layer(self.local),
            checkpoints=Layer(self.checkpoints),
            edge_since=Layer(self.edge_since),
            edge_later=Layer(self.edge_later),
            superseded=Layer(self.superseded),
            checkpoint_history=Layer(self.checkpoint_history),
            audit_lines=self.audit_lines,
            node_count=self.node_count,
            latest=self.latest,
        )


@dataclass(slots=True)
class FoldDelta:
    """What one `fold_into` changed, in fold order: only lines that won (duplicates that
    folded away are absent)."""

    nodes: list[str] = field(default_factory=list)
    """Ids of nodes created (in rank order)."""
    edges: list[EdgeKey] = field(default_factory=list)
    """Edge keys created or given a new chat."""
    events: list[EventLine] = field(default_factory=list)
    mappings: list[tuple[str, str]] = field(default_factory=list)
    """(chat, node) mapping keys created or superseded (a prerequisite turned learned)."""
    sessions: bool = False
    """True when any checkpoint line was folded."""

    @classmethod
    def everything(cls, state: GraphState) -> FoldDelta:
        """The delta that built `state` from an empty one (ordered as `state` is)."""
        return cls(
            nodes=list(state.nodes),
            edges=list(state.edges),
            events=list(state.events.values()),
            mappings=list(state.mappings),
            sessions=bool(state.checkpoints),
        )


def normalise_statement(text: str) -> str:
    """The identity key of a statement: NFKC, casefold, single spaces, no end punctuation."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.split()).rstrip(" .!?;:")


def identity_keys(line: PropositionLine) -> Iterable[tuple[NodeKind, str]]:
    """The keys a node answers to: its normalised statement and aliases, within its kind."""
    for text in (line.statement, *line.aliases):
        key = normalise_statement(text)
        if key:
            yield line.kind, key


def add_node(state: GraphState, line: PropositionLine) -> bool:
    """Fold one proposition line in place; False when its id was already folded."""
    if line.id in state.nodes:
        return False
    state.rank[line.id] = state.node_count
    state.node_count += 1
    state.nodes[line.id] = line
    for key in identity_keys(line):
        state.identity.setdefault(key, line.id)
    return True


def edge_times(state: GraphState, key: EdgeKey) -> tuple[datetime, ...]:
    """When each chat in `state.edges[key]` asserted the edge (same order)."""
    return (state.edge_since[key], *state.edge_later.get(key, ()))


def add_edge(state: GraphState, edge: EdgeLine) -> EdgeKey | None:
    """Fold one edge line in place; its key, or None when its chat already asserted it."""
    key = (edge.from_, edge.to, edge.type)
    chats = state.edges.get(key, ())
    if edge.chat_id in chats:
        return None
    state.edges[key] = (*chats, edge.chat_id)
    if chats:
        state.edge_later[key] = (*state.edge_later.get(key, ()), edge.created_at)
    else:
        state.edge_since[key] = edge.created_at
    return key


def add_event(state: GraphState, event: EventLine) -> bool:
    """Fold one event line in place; False when its ref was already folded."""
    if event.ref in state.events:
        return False
    state.events[event.ref] = event
    return True


def supersedes(new: MappingLine, old: MappingLine | None) -> bool:
    """Whether `new` replaces `old` for their (chat, node): the first line wins, except that
    a chat that only rested on a node (a prerequisite) and later showed it records that."""
    return old is None or (old.prerequisite and not new.prerequisite)


def add_mapping(state: GraphState, mapping: MappingLine) -> tuple[str, str] | None:
    """Fold one mapping line in place; its (chat, node) key, or None when it changed nothing
    (see `supersedes`)."""
    state.local.setdefault((mapping.chat_id, mapping.local_id), mapping.node_id)
    key = (mapping.chat_id, mapping.node_id)
    old = state.mappings.get(key)
    if not supersedes(mapping, old):
        return None
    if old is not None:
        state.superseded[key] = old
    state.mappings[key] = mapping
    return key


def fold_into(state: GraphState, batch: LedgerBatch) -> FoldDelta:
    """Fold `batch` into `state` IN PLACE (O(batch)); what changed. For the state's owner."""
    delta = FoldDelta()
    for line in batch.propositions:
        if add_node(state, line):
            delta.nodes.append(line.id)
    for edge in batch.edges:
        key = add_edge(state, edge)
        if key is not None:
            delta.edges.append(key)
    events, won = state.events, delta.events
    for event in batch.events:  # inlined `add_event`: the ledger's largest file
        if event.ref not in events:
            events[event.ref] = event
            won.append(event)
    for mapping in batch.mappings:
        mapped = add_mapping(state, mapping)
        if mapped is not None:
            delta.mappings.append(mapped)
    history = state.checkpoint_history
    for checkpoint in batch.sessions:
        state.checkpoints[checkpoint.chat_id] = checkpoint
        history[checkpoint.chat_id] = (*history.get(checkpoint.chat_id, ()), checkpoint)
    delta.sessions = bool(batch.sessions)
    state.audit_lines += len(batch.audit)
    state.latest = _latest(state.latest, batch)
    return delta


_created_at = attrgetter("created_at")
_at = attrgetter("at")


def _latest(latest: datetime | None, batch: LedgerBatch) -> datetime | None:
    """`latest` or a later moment of a line in `batch` (duplicates count: same moments)."""
    moments = [
        max(map(_created_at, batch.propositions), default=None),
        max(map(_created_at, batch.edges), default=None),
        max(map(_at, batch.events), default=None),
        max(map(_at, batch.mappings), default=None),
        max(map(_at, batch.sessions), default=None),
        latest,
    ]
    return max((m for m in moments if m is not None), default=None)


def fold(state: GraphState, batch: LedgerBatch) -> GraphState:
    """A new state with `batch` folded in (`state` is untouched); folding in two batches
    equals folding once."""
    if batch.is_empty():
        return state
    new = state.copy()
    fold_into(new, batch)
    return new
