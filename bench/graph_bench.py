"""Graph reads and merges: B1 cold snapshot, B2 warm snapshot, B9 merge of one session,
B16 the review queue, B17 the graph as of a past moment.

All run in this process on the real code: the real `JsonlGraphStore`, followed by a
`LedgerView` into a `SnapshotDeriver` as the server's `GraphReader` does, read *as of now*
(memory and its states included); the pure `merge` (B9) and `review_queue` (B16). Floors
are typed whole-buffer decodes of the same bytes (B17's is a cold B1 read).
"""

from __future__ import annotations

import random
import statistics
import time
from datetime import datetime, timedelta

import anyio
import anyio.to_thread
import msgspec

from backend.agent.extraction.channels import collector_paused
from backend.agent.extraction.ledger_view import LedgerView
from backend.core.graph import GraphState, SnapshotDeriver, fold, merge
from backend.core.ports import GraphStore, LedgerBatch
from backend.core.review import review_queue
from backend.server.stores import build_stores
from bench import synthetic
from bench.context import DECODERS, BenchContext, atimed, decode_ledgers, timed
from bench.harness import Check, Result, ainterleave
from shared_contracts.graph import GraphSnapshot
from tests.fakes import FixedClock, SequentialIds

MS = 1000.0
APPENDED = 1_000
NOW = synthetic.EPOCH + timedelta(days=60)
"""The bench's "now": 25 days after the data's last event, so most memories have faded."""


class NowReader:
    """`GraphReader` as the server will run it with a clock (a fresh view and deriver, the
    collector paused while deriving), reading as of `NOW` plus the real time elapsed since
    the reader was made, as a server clock moves between reads."""

    def __init__(self, graph: GraphStore) -> None:
        self.deriver = SnapshotDeriver()
        self.view = LedgerView(graph, on_fold=self.deriver.apply)
        self._started = time.perf_counter()

    def now(self) -> datetime:
        return NOW + timedelta(seconds=time.perf_counter() - self._started)

    async def snapshot(self, as_of: datetime | None = None) -> GraphSnapshot:
        state = await self.view.refresh()
        with collector_paused():
            return self.deriver.snapshot(state, as_of or self.now())


def bench_b1(ctx: BenchContext) -> list[Result]:
    """Cold `GET /api/graph` computation: a fresh reader decodes, folds and derives all."""
    data_dir, _ = ctx.graph("full")
    graph = build_stores(data_dir).graph

    async def floor() -> float:
        return await anyio.to_thread.run_sync(timed, lambda: decode_ledgers(data_dir)) * MS

    async def subject() -> float:
        return await atimed(NowReader(graph).snapshot) * MS

    floors, subjects = anyio.run(ainterleave, ctx.rounds, floor, subject)
    result = Result(
        id="B1",
        what=f"cold snapshot as of now {_label(ctx.sizes('full'))}",
        unit="ms",
        floor_label="typed msgspec decode_lines of the same ledger files (read + decode)",
        floor=floors,
        subject=subjects,
        goal="≤ 2.0× floor",
    )
    result.checks = [Check("ratio", result.ratio_median, 2.0)]
    return [result]


def bench_b2(ctx: BenchContext) -> list[Result]:
    """Warm snapshot: the same reader after 1,000 more events were appended."""
    data_dir = ctx.copy_graph("full", "graph-b2")
    sizes = ctx.sizes("full")
    graph = build_stores(data_dir).graph
    reader = NowReader(graph)
    rng = random.Random(f"{synthetic.SEED}:b2")
    counter = [sizes.events]

    async def subject() -> float:
        events = synthetic.new_events(sizes, counter[0], APPENDED, rng)
        counter[0] += APPENDED
        await graph.append(LedgerBatch(events=events))  # untimed
        return await atimed(reader.snapshot) * MS

    async def floor() -> float:
        return await anyio.to_thread.run_sync(timed, lambda: decode_ledgers(data_dir)) * MS

    async def run() -> tuple[list[float], list[float]]:
        await reader.snapshot()  # warm: everything so far is folded and derived
        return await ainterleave(ctx.rounds, floor, subject)

    floors, subjects = anyio.run(run)
    result = Result(
        id="B2",
        what=f"warm snapshot after +{APPENDED:,} events",
        unit="ms",
        floor_label="full typed decode of the ledgers (B1 floor)",
        floor=floors,
        subject=subjects,
        goal="≤ 0.05× floor",
        note="each round appends 1,000 new events (untimed) before the timed snapshot, read"
        " as of now (the clock moves on between rounds)",
    )
    result.checks = [Check("ratio", result.ratio_median, 0.05)]
    return [result]


def _label(sizes: synthetic.Sizes) -> str:
    return f"{sizes.propositions:,}/{sizes.edges:,}/{sizes.events:,}"


def _session_lines(batch: LedgerBatch) -> dict[str, bytes]:
    encoder = msgspec.json.Encoder()
    out = {}
    for name in DECODERS:
        lines = getattr(batch, name)
        if lines:
            out[name] = b"".join(encoder.encode(line) + b"\n" for line in lines)
    return out


def bench_b9(ctx: BenchContext) -> list[Result]:
    """Merge of one session's findings into the 10k graph (and into the 1k graph)."""
    _, big = ctx.graph("full")
    _, small = ctx.graph("1k")
    record = synthetic.chat_record("chat-bench-session", target_bytes=20_000, quizzes=10)
    states = {
        "full": fold(GraphState(), big),
        "1k": fold(GraphState(), small),
    }
    findings = {
        "full": synthetic.session_findings(big, record),
        "1k": synthetic.session_findings(small, record),
    }
    clock, ids = FixedClock(), SequentialIds()

    def do_merge(name: str):
        return merge(states[name], findings[name], record, run_id="run-bench", clock=clock, ids=ids)

    produced = do_merge("full")
    buffers = _session_lines(produced)
    lines = sum(len(getattr(produced, n)) for n in DECODERS)
    reps = 1 if ctx.quick else 5

    def floor() -> None:
        for name, data in buffers.items():
            DECODERS[name].decode_lines(data)

    def sample(fn) -> float:
        return statistics.median(timed(fn) for _ in range(reps)) * MS

    floors, big_ms, small_ms = [], [], []
    for index in range(ctx.rounds):
        order = [0, 1, 2] if index % 2 == 0 else [2, 1, 0]
        got = {}
        for which in order:
            if which == 0:
                got[0] = sample(lambda: [floor() for _ in range(10)]) / 10
            elif which == 1:
                got[1] = sample(lambda: do_merge("full"))
            else:
                got[2] = sample(lambda: do_merge("1k"))
        floors.append(got[0])
        big_ms.append(got[1])
        small_ms.append(got[2])
    merge_row = Result(
        id="B9",
        what=f"merge one session ({lines} lines) into {ctx.sizes('full').propositions:,} nodes",
        unit="ms",
        floor_label="typed decode of that session's ledger lines",
        floor=floors,
        subject=big_ms,
        goal="≤ 5× floor",
        extra={"session_lines": lines, "session_bytes": sum(map(len, buffers.values()))},
    )
    merge_row.checks = [Check("ratio", merge_row.ratio_median, 5.0)]
    big_n, small_n = ctx.sizes("full").propositions, ctx.sizes("1k").propositions
    scale_row = Result(
        id="B9-scale",
        what=f"merge at {big_n:,} vs {small_n:,} nodes",
        unit="ms",
        floor_label="the same merge into the 1k graph",
        floor=small_ms,
        subject=big_ms,
        goal="≤ 1.3× (independent of graph size)",
    )
    scale_row.checks = [Check("ratio", scale_row.ratio_median, 1.3)]
    return [merge_row, scale_row]


def bench_b16(ctx: BenchContext) -> list[Result]:
    """The review queue of the 10k graph as of now, from the warm snapshot."""
    data_dir, _ = ctx.graph("full")
    reader = NowReader(build_stores(data_dir).graph)
    snapshot = anyio.run(reader.snapshot)

    def floor() -> None:
        decode_ledgers(data_dir)

    def subject() -> None:
        review_queue(snapshot)

    def everything() -> None:
        review_queue(snapshot, limit=None)

    floors, subjects, fulls = [], [], []
    for index in range(ctx.rounds):
        order = (floor, subject, everything) if index % 2 == 0 else (everything, subject, floor)
        got = {fn: timed(fn) * MS for fn in order}
        floors.append(got[floor])
        subjects.append(got[subject])
        fulls.append(got[everything])
    queue = review_queue(snapshot, limit=None)
    reasons: dict[str, int] = {}
    for item in queue.items:
        reasons[item.reason] = reasons.get(item.reason, 0) + 1
    full_ratio = statistics.median(f / b for f, b in zip(fulls, floors, strict=True))
    result = Result(
        id="B16",
        what=f"review queue of {len(snapshot.nodes):,} nodes ({queue.total:,} queued, first 50)",
        unit="ms",
        floor_label="full typed decode of the ledgers (B1 floor)",
        floor=floors,
        subject=subjects,
        goal="≤ 0.1× floor",
        extra={
            "queued": queue.total,
            "by_reason": reasons,
            "all_items_ms": round(statistics.median(fulls), 2),
            "all_items_ratio": round(full_ratio, 4),
        },
        note=f"every node ranked, the default 50 items built; all {queue.total:,} items built:"
        f" {statistics.median(fulls):.0f} ms ({full_ratio:.3f}x)",
    )
    result.checks = [Check("ratio", result.ratio_median, 0.1)]
    return [result]


def bench_b17(ctx: BenchContext) -> list[Result]:
    """The graph as of a past moment, from the warm reader, against a cold B1 read."""
    data_dir, batch = ctx.graph("full")
    graph = build_stores(data_dir).graph
    warm = NowReader(graph)
    anyio.run(warm.snapshot)
    last = max(e.at for e in batch.events)
    # The heaviest past: a day before the last event keeps ~97 % of the lines, all derived
    # from scratch. (The synthetic history spans 35 days: a year back is an empty graph.)
    past = last - timedelta(days=1)

    async def floor() -> float:
        return await atimed(NowReader(graph).snapshot) * MS

    async def subject() -> float:
        return await atimed(lambda: warm.snapshot(past)) * MS

    middle = synthetic.EPOCH + (last - synthetic.EPOCH) / 2

    async def run() -> tuple[list[float], list[float], float]:
        floors, subjects = await ainterleave(ctx.rounds, floor, subject)
        halves = [await atimed(lambda: warm.snapshot(middle)) * MS for _ in range(3)]
        return floors, subjects, statistics.median(halves)

    floors, subjects, half = anyio.run(run)
    result = Result(
        id="B17",
        what="snapshot as of a day before the last event (warm reader)",
        unit="ms",
        floor_label="a cold B1 read as of now (fresh reader: decode, fold, derive)",
        floor=floors,
        subject=subjects,
        goal="≤ 1.0× floor (no slower than B1)",
        extra={"mid_history_ms": round(half, 2)},
        note=f"as of mid-history (half the lines): {half:.0f} ms",
    )
    result.checks = [Check("ratio", result.ratio_median, 1.0)]
    return [result]
