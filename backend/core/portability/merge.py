"""What an import writes: everything into an empty store, or a merge beside what is there.

Into an empty store the archive is restored as it is: every line in its ledger order (a
session's replay seeds its graph from a prefix of each ledger, so order is kept).

A merge follows the graph merger's rules, so importing the same archive twice writes
nothing the second time:
- a chat, job, material or trace present on both sides is skipped when it is the same record and is
  an `ImportConflict` when it is not (nothing is written then);
- a node whose id is already folded is the same node (a conflict if its line differs); one
  whose normalised statement or alias matches a node already there (within its kind) is
  that node: the oldest match, as `graph.merge` chooses, and the archive's edges, events and
  mappings are rewritten to it; any other node is appended;
- edges by (from, to, type) per chat, events by ref and mappings by (chat, node) are
  appended only where the fold would keep them (first line per key wins, a prerequisite
  mapping superseded by a shown one); a chat's checkpoint only if it is further along;
  audit lines only if the same line is not there yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

import msgspec

from backend.core.errors import ImportConflict, ImportRefused
from backend.core.graph_state import (
    GraphState,
    add_edge,
    add_event,
    add_mapping,
    add_node,
    fold_into,
    identity_keys,
    supersedes,
)
from backend.core.portability.records import LearnerData
from backend.core.ports import LedgerBatch
from shared_contracts.graph import (
    AuditLine,
    EdgeLine,
    EventLine,
    MappingLine,
    PropositionLine,
    SessionCheckpoint,
)
from shared_contracts.trace import AnyTraceEvent


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


R = TypeVar("R", bound=_HasId)


def plan_import(
    local: LearnerData, incoming: LearnerData, *, merge: bool, held: Mapping[str, int]
) -> LearnerData:
    """The records to write (`incoming` itself into an empty store). `local` is what the
    store holds that an import compares with: every job and ledger line, and the chats,
    traces and materials the archive also names; `held` counts every chat and material
    the store holds (`{"chats": n, "materials": m}`)."""
    if local.is_empty() and not any(held.values()):
        return incoming
    if not merge:
        raise ImportRefused(
            f"the data dir already holds {describe(local, held)}: import into an empty"
            " data dir, or merge the archive into this one (`harness import --merge`)"
        )
    return LearnerData(
        chats=_new_records("chat", local.chats, incoming.chats),
        jobs=_new_records("job", local.jobs, incoming.jobs),
        ledgers=merge_ledgers(local.ledgers, incoming.ledgers),
        traces=_new_traces(local.traces, incoming.traces),
        materials=_new_records("material", local.materials, incoming.materials),
    )


def describe(local: LearnerData, held: Mapping[str, int]) -> str:
    counts = local.counts()
    parts = [
        (held.get("chats", 0), "chat"),
        (counts["jobs"], "job"),
        (counts["propositions"], "node"),
        (held.get("materials", 0), "material"),
    ]
    shown = [f"{n} {what}{'s' if n != 1 else ''}" for n, what in parts if n]
    return ", ".join(shown) or "graph ledger lines"


def _new_records(kind: str, local: Sequence[R], incoming: Sequence[R]) -> list[R]:
    mine = {record.id: record for record in local}
    out = []
    for record in incoming:
        held = mine.get(record.id)
        if held is None:
            out.append(record)
        elif held != record:
            raise ImportConflict(
                f"{kind} {record.id!r} is in the data dir and in the archive with different"
                " content; nothing was imported"
            )
    return out


def _new_traces(
    local: dict[str, list[AnyTraceEvent]], incoming: dict[str, list[AnyTraceEvent]]
) -> dict[str, list[AnyTraceEvent]]:
    out = {}
    for chat_id, events in incoming.items():
        held = local.get(chat_id)
        if not held:
            out[chat_id] = events
        elif held != events:
            raise ImportConflict(
                f"the trace of chat {chat_id!r} differs between the data dir and the archive;"
                " nothing was imported"
            )
    return out


class _GraphMerge:
    """The ledger half of a merge: folds what it appends, so later lines see earlier ones."""

    def __init__(self, local: LedgerBatch) -> None:
        self.state = GraphState()
        fold_into(self.state, local)
        self.ids = {
            "propositions": {line.id for line in local.propositions},
            "edges": {line.id for line in local.edges},
            "events": {line.id for line in local.events},
        }
        self.audit = set(local.audit)
        self.remap: dict[str, str] = {}
        self.out = LedgerBatch()

    def node(self, line: PropositionLine) -> None:
        held = self.state.nodes.get(line.id)
        if held is not None:
            if held != line:
                raise ImportConflict(
                    f"node {line.id!r} is in the data dir and in the archive with different"
                    " content; nothing was imported"
                )
            return
        match = self._identity_match(line)
        if match is not None:
            self.remap[line.id] = match
            return
        self._claim("propositions", line.id)
        self.out.propositions.append(line)
        add_node(self.state, line)

    def _identity_match(self, line: PropositionLine) -> str | None:
        """The oldest node this one's statement or aliases name (as `graph.merge` picks)."""
        identity = self.state.identity
        found = {identity[key] for key in identity_keys(line) if key in identity}
        return min(found, key=self.state.rank.__getitem__) if found else None

    def _claim(self, ledger: str, line_id: str) -> None:
        if line_id in self.ids[ledger]:
            raise ImportConflict(
                f"graph/{ledger}.jsonl: id {line_id!r} is in the data dir and in the archive"
                " for different lines; nothing was imported"
            )
        self.ids[ledger].add(line_id)

    def node_id(self, node_id: str) -> str:
        return self.remap.get(node_id, node_id)

    def edge(self, edge: EdgeLine) -> None:
        a, b = self.node_id(edge.from_), self.node_id(edge.to)
        if a == b or edge.chat_id in self.state.edges.get((a, b, edge.type), ()):
            return  # asserted by this chat already, or a loop once both ends are one node
        self._claim("edges", edge.id)
        edge = msgspec.structs.replace(edge, from_=a, to=b)
        self.out.edges.append(edge)
        add_edge(self.state, edge)

    def event(self, event: EventLine) -> None:
        if event.ref in self.state.events:
            return
        self._claim("events", event.id)
        if event.node_id is not None:
            event = msgspec.structs.replace(event, node_id=self.node_id(event.node_id))
        self.out.events.append(event)
        add_event(self.state, event)

    def mapping(self, mapping: MappingLine) -> None:
        mapping = msgspec.structs.replace(mapping, node_id=self.node_id(mapping.node_id))
        if supersedes(mapping, self.state.mappings.get((mapping.chat_id, mapping.node_id))):
            self.out.mappings.append(mapping)
            add_mapping(self.state, mapping)

    def checkpoints(self, lines: Iterable[SessionCheckpoint]) -> None:
        last = {line.chat_id: line for line in lines}  # a chat's checkpoint: its last line
        for chat_id, line in last.items():
            held = self.state.checkpoints.get(chat_id)
            if held is None or line.folded_at > held.folded_at:
                self.out.sessions.append(line)
                self.state.checkpoints[chat_id] = line

    def audit_line(self, line: AuditLine) -> None:
        if line not in self.audit:
            self.out.audit.append(line)
            self.audit.add(line)


def merge_ledgers(local: LedgerBatch, incoming: LedgerBatch) -> LedgerBatch:
    """The lines to append to `local` for `incoming` (see the module's rules)."""
    merge = _GraphMerge(local)
    for line in incoming.propositions:
        merge.node(line)
    for edge in incoming.edges:
        merge.edge(edge)
    for event in incoming.events:
        merge.event(event)
    for mapping in incoming.mappings:
        merge.mapping(mapping)
    merge.checkpoints(incoming.sessions)
    for audit in incoming.audit:
        merge.audit_line(audit)
    return merge.out
