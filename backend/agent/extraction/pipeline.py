"""The extraction pipeline, the sole writer of the graph ledgers.

One run for one chat: read the graph state and the chat record → extractor → evidence gate
→ auditor → merger → append ONE batch (audit lines included; the store writes the
checkpoint last). Any failure before the append writes nothing, so the next trigger re-runs
the same window.

A run costs O(session), not O(graph): the pipeline follows the ledgers with its own
`LedgerView` (only new lines are folded), the merge works on an overlay of that state, and
the report's stats come from a `SnapshotDeriver` fed by the view, which re-derives only what
the run's lines touched. The view's state only ever holds durably appended lines: the run's
batch reaches it by reading the ledgers back after the append.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from itertools import islice
from typing import cast

import anyio

from backend.agent.extraction.auditor import apply_verdicts
from backend.agent.extraction.ledger_view import LedgerView
from backend.agent.extraction.stages import (
    AuditInput,
    Auditor,
    ExtractionInput,
    Extractor,
    KnownNode,
)
from backend.core.evidence_gate import run_gate
from backend.core.graph import (
    FoldDelta,
    GraphState,
    SnapshotDeriver,
    merge_resolving,
    with_audit,
)
from backend.core.memory import MemoryPolicy
from backend.core.pending import foldable_upto
from backend.core.ports import ChatStore, Clock, GraphStore, IdGen, ProcessLocks, TraceStore
from shared_contracts.extraction import ExtractorOutput
from shared_contracts.graph import AuditLine, GraphStats
from shared_contracts.trace import ExtractionEvent

log = logging.getLogger(__name__)
MAX_KNOWN_NODES = 300


@dataclass(frozen=True, slots=True)
class ExtractionReport:
    """What one run did. `nothing_to_do`: no new messages since the chat's checkpoint."""

    chat_id: str
    run_id: str = ""
    nothing_to_do: bool = False
    new_nodes: int = 0
    merged: int = 0
    new_edges: int = 0
    new_events: int = 0
    dropped_by_gate: int = 0
    dropped_by_auditor: int = 0
    folded_at: int = 0
    stats: GraphStats | None = None


class ChatIndex:
    """Per chat, the nodes mapped to it (fold order) and the plan node each was mapped from,
    kept up to date from each fold's delta so a run's known nodes cost O(session)."""

    def __init__(self) -> None:
        self._mine: dict[str, list[str]] = {}
        self._plan: dict[str, dict[str, str]] = {}
        self._locals = 0  # entries of `state.local` already indexed

    def apply(self, state: GraphState, delta: FoldDelta) -> None:
        """Index what `delta` (just folded into `state`, the view's own) added."""
        for chat_id, node_id in delta.mappings:
            mine = self._mine.setdefault(chat_id, [])
            # Only a match can supersede a prerequisite mapping of the chat: already listed.
            if state.mappings[chat_id, node_id].how == "created" or node_id not in mine:
                mine.append(node_id)
        # `local` is a plain dict that only grows: its new entries are its last ones.
        new = len(state.local) - self._locals
        local_ids = cast(dict[tuple[str, str], str], state.local)  # the view's own: a dict
        added = list(islice(reversed(local_ids.items()), new))
        for (chat_id, local), node_id in reversed(added):
            if local.startswith("plan:"):  # a later local id of the same node wins
                self._plan.setdefault(chat_id, {})[node_id] = local.removeprefix("plan:")
        self._locals += new

    def known(self, state: GraphState, chat_id: str) -> list[KnownNode]:
        """The chat's last `MAX_KNOWN_NODES` mapped nodes, with their plan nodes."""
        plan_of = self._plan.get(chat_id, {})
        return [
            KnownNode(
                id=node,
                statement=state.nodes[node].statement,
                kind=state.nodes[node].kind,
                plan_node=plan_of.get(node),
                prerequisite=state.mappings[chat_id, node].prerequisite,
            )
            for node in self._mine.get(chat_id, [])[-MAX_KNOWN_NODES:]
            if node in state.nodes
        ]


def _drops(lines: list[AuditLine]) -> list[str]:
    return [f"{a.item_kind}:{a.item}:{a.reason}" for a in lines]


class ExtractionPipeline:
    """Rules: the only code that appends to the graph ledgers; one append per run; runs
    are serialised at the merge step so concurrent chats never merge from a stale state.
    `deriver` is the read model the report's stats come from (a fresh one by default).
    `view` and `deriver` are public so a reader can share them (one folded copy of the
    graph per process): sharing only reads, so the state still holds only durable lines."""

    def __init__(
        self,
        chats: ChatStore,
        graph: GraphStore,
        extractor: Extractor,
        auditor: Auditor,
        *,
        clock: Clock,
        ids: IdGen,
        traces: TraceStore | None = None,
        deriver: SnapshotDeriver | None = None,
        locks: ProcessLocks | None = None,
    ) -> None:
        self._locks = locks
        self._chats = chats
        self._graph = graph
        self._deriver = deriver if deriver is not None else SnapshotDeriver()
        self._index = ChatIndex()
        self._view = LedgerView(graph, on_fold=self._on_fold)
        self._extractor = extractor
        self._auditor = auditor
        self._clock = clock
        self._ids = ids
        self._traces = traces
        self._merge_lock = anyio.Lock()

    @property
    def view(self) -> LedgerView:
        """The pipeline's follower of the ledgers (read it, never mutate its state)."""
        return self._view

    @property
    def deriver(self) -> SnapshotDeriver:
        """The snapshot deriver `view` feeds (every fold reaches it, whoever refreshed)."""
        return self._deriver

    def _on_fold(self, state: GraphState, delta: FoldDelta) -> None:
        self._deriver.apply(state, delta)
        self._index.apply(state, delta)

    async def _stats_after_append(self, run_id: str) -> GraphStats | None:
        """Fold the appended batch back in (O(batch)) and derive only what it touched, as
        of the graph's newest line (no clock read: a replay derives the same). The batch
        is durable by now: failing here must not fail the run."""
        try:
            state = await self._view.refresh()
            return self._deriver.snapshot(state, state.latest).stats
        except Exception as exc:
            log.warning("[extraction %s] stats not derived: %s", run_id, exc)
            return None

    async def run(self, chat_id: str) -> ExtractionReport:
        """Extract and merge the chat's unfolded messages; raises on any failure."""
        record = await self._chats.get(chat_id)
        state = await self._view.refresh()
        start, upto = state.folded_at(chat_id), foldable_upto(record)
        if upto <= start:
            return ExtractionReport(chat_id=chat_id, nothing_to_do=True, folded_at=start)
        run_id = self._ids.new("run")
        known = self._index.known(state, chat_id)
        output = await self._extractor.extract(ExtractionInput(record, start, upto, known))
        known_ids = {k.id for k in known}
        gated = run_gate(
            output, record, known_nodes=known_ids, upto=upto, run_id=run_id, at=self._clock.now()
        )
        verdicts = await self._auditor.audit(AuditInput(record, start, upto, gated.findings))
        audited = apply_verdicts(
            gated.findings,
            verdicts,
            known_nodes=known_ids,
            chat_id=chat_id,
            run_id=run_id,
            at=self._clock.now(),
        )
        async with self._merge_lock, self._merging_alone():
            state = await self._view.refresh()
            if state.folded_at(chat_id) >= upto:  # another run folded this window meanwhile
                return ExtractionReport(chat_id=chat_id, nothing_to_do=True, folded_at=upto)
            batch, resolved = merge_resolving(
                state, audited.findings, record, run_id=run_id, clock=self._clock, ids=self._ids
            )
            batch = with_audit(batch, [*gated.audit, *audited.audit])
            await self._graph.append(batch)
            stats = await self._stats_after_append(run_id)
        report = ExtractionReport(
            chat_id=chat_id,
            run_id=run_id,
            new_nodes=len(batch.propositions),
            merged=len(set(resolved.values()) - {p.id for p in batch.propositions}),
            new_edges=len(batch.edges),
            new_events=len(batch.events),
            dropped_by_gate=len(gated.audit),
            dropped_by_auditor=len(audited.audit),
            folded_at=upto,
            stats=stats,
        )
        _log(report, start, [*gated.audit, *audited.audit])
        await self._trace(chat_id, run_id, output, gated.audit, audited.audit, report)
        return report

    @asynccontextmanager
    async def _merging_alone(self) -> AsyncIterator[None]:
        """No other process merges into this graph meanwhile (its lines are read after)."""
        if self._locks is None:
            yield
            return
        async with self._locks.hold("graph-merge"):
            yield

    async def _trace(
        self,
        chat_id: str,
        run_id: str,
        output: ExtractorOutput,
        gate_drops: list[AuditLine],
        auditor_drops: list[AuditLine],
        report: ExtractionReport,
    ) -> None:
        if self._traces is None:
            return
        try:
            # seq is assigned where events are sequenced (the tracer's sink, in emission
            # order): reading the whole trace back just to count it grew with every run
            event = ExtractionEvent(
                seq=0,
                run_id=run_id,
                extraction=output,
                gate_drops=_drops(gate_drops),
                auditor_drops=_drops(auditor_drops),
                merge_diff=(
                    f"+{report.new_nodes} nodes, +{report.new_edges} edges,"
                    f" +{report.new_events} events, {report.merged} merged"
                ),
            )
            await self._traces.append(chat_id, [event])
        except Exception as exc:  # the ledgers are written; a trace failure must not undo that
            log.warning("[extraction %s] trace not recorded: %s", run_id, exc)


def _log(report: ExtractionReport, start: int, drops: list[AuditLine]) -> None:
    """One line for the run, one per dropped item."""
    log.info(
        "[extraction %s] chat=%s messages=%d..%d new_nodes=%d merged=%d edges=%d events=%d"
        " dropped_by_gate=%d dropped_by_auditor=%d",
        report.run_id,
        report.chat_id,
        start,
        report.folded_at,
        report.new_nodes,
        report.merged,
        report.new_edges,
        report.new_events,
        report.dropped_by_gate,
        report.dropped_by_auditor,
    )
    for line in drops:
        log.info(
            "[extraction %s] drop %s %s %s: %s",
            report.run_id,
            line.stage,
            line.item_kind,
            line.item,
            line.reason,
        )


def create_extraction_pipeline(
    chats: ChatStore,
    graph: GraphStore,
    extractor: Extractor,
    auditor: Auditor,
    *,
    clock: Clock,
    ids: IdGen,
    traces: TraceStore | None = None,
    locks: ProcessLocks | None = None,
    policy: MemoryPolicy | None = None,
) -> ExtractionPipeline:
    """The pipeline wired to its ports (the sole writer of `graph`; `locks` keep it so
    across the processes sharing the graph); its read model derives memory by `policy`
    (the desired retention)."""
    return ExtractionPipeline(
        chats,
        graph,
        extractor,
        auditor,
        clock=clock,
        ids=ids,
        traces=traces,
        locks=locks,
        deriver=SnapshotDeriver(policy),
    )
