"""B7: the teacher's graph-context block at 150, 1k and 10k nodes: its tokens and render time.

Tokens are counted with the tiktoken encodings bundled in litellm (offline); render time is
compared with the B1 floor (the full typed decode of the 10k ledgers), measured in the
same rounds.
"""

from __future__ import annotations

import statistics

from backend.core.graph import GraphState, derive_snapshot, fold
from backend.core.graph_context import render_graph_context
from bench.context import BenchContext, decode_ledgers, timed
from bench.harness import Check, Result
from bench.tokens import count_tokens

MS = 1000.0
MAX_TOKENS = 2000
SETS = (("slice", "150"), ("1k", "1k"), ("full", "10k"))


def bench_b7(ctx: BenchContext) -> list[Result]:
    """One row per graph size: render time / B1 floor, and the block's token count."""
    floor_dir, _ = ctx.graph("full")
    snapshots = {name: derive_snapshot(fold(GraphState(), ctx.graph(name)[1])) for name, _ in SETS}
    reps = 1 if ctx.quick else 5
    floors: list[float] = []
    renders: dict[str, list[float]] = {name: [] for name, _ in SETS}
    for index in range(ctx.rounds):
        if index % 2 == 0:
            floors.append(timed(lambda: decode_ledgers(floor_dir)) * MS)
        for name, _ in SETS:
            snap = snapshots[name]
            samples = [
                timed(lambda s=snap: render_graph_context(s, max_tokens=MAX_TOKENS))
                for _ in range(reps)
            ]
            renders[name].append(statistics.median(samples) * MS)
        if index % 2 == 1:
            floors.append(timed(lambda: decode_ledgers(floor_dir)) * MS)
    results = []
    for name, label in SETS:
        block = render_graph_context(snapshots[name], max_tokens=MAX_TOKENS)
        tokens = count_tokens(block.markdown)
        worst = max(tokens.values())
        row = Result(
            id=f"B7@{label}",
            what=f"context block, {len(snapshots[name].nodes):,} nodes ({worst:,} tokens)",
            unit="ms",
            floor_label="typed decode of the 10k ledgers (B1 floor)",
            floor=floors,
            subject=renders[name],
            goal=f"≤ {MAX_TOKENS:,} tokens, render ≤ 0.1× floor",
            extra={
                "tokens": tokens,
                "chars": len(block.markdown),
                "tokens_estimate": block.tokens_estimate,
                "nodes_shown": block.nodes_shown,
                "nodes_total": block.nodes_total,
            },
        )
        row.checks = [
            Check("tokens", float(worst), float(MAX_TOKENS)),
            Check("render ratio", row.ratio_median, 0.1),
        ]
        results.append(row)
    return results
