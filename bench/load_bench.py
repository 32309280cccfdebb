"""B5: 50 chats start a turn at once (instant model, 100 tokens) on one pinned CPU: the
median of the per-round ratios of the p99 turn latency (no absolute goal: the same code's
p99 was 86 ms on one machine and 331 ms on another the same week; issue 24).

Subject: the real app with durable file stores. Floor: a minimal Litestar WebSocket turn
with the same model and frames but no persistence, no tools and no record
(`bench.serve turnfloor`). Latency is from sending `user_message` to receiving
`turn_finished`, on the client.

B5-durable (information, no goal): the same subject against the same minimal turn that also
makes the two durable writes of its chat a turn that the owner kept (`turnfloor
--durable`): the ratio of what our code adds on top of the durability itself.
"""

from __future__ import annotations

import time

import anyio

from bench.context import BenchContext
from bench.harness import Check, Result, percentile
from bench.procs import ServerProc, pin_self, unpin_self
from bench.transport_bench import _cpus
from bench.wsclient import close_all, create_chats, open_chat, open_ws, run_async, turn

MS = 1000.0
TOKENS = 100
RATIO_LIMIT = 2.5


async def _burst(sockets, latencies: list[float]) -> None:
    """Every socket starts one turn at the same moment; each turn's latency is kept."""

    async def one(ws) -> None:
        start = time.perf_counter()
        await turn(ws, TOKENS)
        latencies.append((time.perf_counter() - start) * MS)

    async with anyio.create_task_group() as tg:
        for ws in sockets:
            tg.start_soon(one, ws)


def bench_b5(ctx: BenchContext) -> list[Result]:
    """Per round: one burst on each server; the row compares their p99 latencies."""
    chats = 5 if ctx.quick else 50
    server_cpu, client_cpu = _cpus(ctx)
    data = ctx.scratch("b5-data")
    log = ctx.workdir / "servers.log"
    written = ctx.scratch("b5-durable")
    with (
        ServerProc("turnfloor", cpu=server_cpu, log=log) as bare,
        ServerProc("turnfloor", "--durable", str(written), cpu=server_cpu, log=log) as writes,
        ServerProc("app", "--data", str(data), cpu=server_cpu, log=log) as app,
    ):
        before = pin_self(client_cpu)
        try:
            outcome = run_async(lambda: _rounds(ctx, [bare, writes], app, chats))
        finally:
            unpin_self(before)
    (floors, subjects, pooled, pooled_floor), durable = outcome  # type: ignore[misc]
    result = Result(
        id="B5",
        what=f"{chats} simultaneous turns, p99 latency",
        unit="ms",
        floor_label="same turns without persistence and tools (minimal Litestar WS turn)",
        floor=floors,
        subject=subjects,
        subject_samples=pooled,
        goal=f"≤ {RATIO_LIMIT}× floor (median of the per-round ratios)",
        extra={
            "tokens": TOKENS,
            "subject_p50_ms": percentile(pooled, 50),
            "floor_p50_ms": percentile(pooled_floor, 50),
            "floor_p99_ms": percentile(pooled_floor, 99),
        },
    )
    result.checks = [Check("ratio", result.ratio_median, RATIO_LIMIT)]
    result.note = f"p99 of the per-round ratios {result.ratio_p99:.2f}×"
    durable_row = Result(
        id="B5-durable",
        what="the same, against a floor that writes its chat durably (information)",
        unit="ms",
        floor_label="the minimal turn + its chat file replaced atomically and fsynced twice",
        floor=durable[0],
        subject=durable[1],
        goal="none (what our code adds on top of the kept durability)",
        extra={"information": True, "tokens": TOKENS},
    )
    return [result, durable_row]


async def _rounds(ctx: BenchContext, bares: list[ServerProc], app: ServerProc, chats: int):
    """Per floor, its rounds against the subject on fresh chats (so the subject is the same
    each time), one floor after the other: one floor's disk writes never land in another's
    rounds. Returns (floor p99s, subject p99s, subject pooled, floor pooled) per floor."""
    phases = []
    for bare in bares:
        ids = await create_chats(app, chats)
        real = [await open_chat(app, chat_id) for chat_id in ids]
        floor_sockets = [await open_ws(f"{bare.ws}/ws") for _ in range(chats)]
        try:
            phases.append(await _paired(ctx, floor_sockets, real))
        finally:
            await close_all(real + floor_sockets)
    return phases


async def _paired(ctx: BenchContext, floor_sockets: list, real: list):
    """Per round one burst on each side, the first to go alternating round by round."""
    await _burst(real, [])  # warm both
    await _burst(floor_sockets, [])
    floors: list[float] = []
    subjects: list[float] = []
    pooled: list[float] = []
    pooled_floor: list[float] = []
    for index in range(ctx.rounds):
        order = [(floor_sockets, floors, pooled_floor), (real, subjects, pooled)]
        for sockets, sink, pool in order if index % 2 == 0 else order[::-1]:
            latencies: list[float] = []
            await _burst(sockets, latencies)
            sink.append(percentile(latencies, 99))
            pool.extend(latencies)
    return floors, subjects, pooled, pooled_floor
