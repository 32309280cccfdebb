"""Server CPU per streamed token: B3 through the real WebSocket route with an instant
model, B4 with the real litellm client against a loopback fake OpenAI stream.

Servers run in their own processes on the same uvicorn config (pinned to CPU 1, the client
to CPU 0 when there are two); CPU is the server process's own `process_time`, read before
and after, and the per-token figure is a slope between a short and a long turn so the
fixed cost of a turn cancels out.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bench.context import BenchContext
from bench.harness import Check, Result, median
from bench.procs import ServerProc, pin_self, unpin_self
from bench.wsclient import cpu_slope, create_chats, open_chat, open_ws, push, run_async, turn

US = 1e6


def _cpus(ctx: BenchContext) -> tuple[int | None, int | None]:
    """(server cpu, client cpu) when pinning is on and there are two CPUs."""
    import os

    return (1, 0) if ctx.pin and len(os.sched_getaffinity(0)) >= 2 else (None, None)


def bench_b3(ctx: BenchContext) -> list[Result]:
    """Per-token server CPU: real route + instant model vs bare ASGI echo push."""
    small, large = (20, 220) if ctx.quick else (100, 2100)
    server_cpu, client_cpu = _cpus(ctx)
    data = ctx.scratch("b3-data")
    log = ctx.workdir / "servers.log"
    with (
        ServerProc("echo", cpu=server_cpu, log=log) as echo,
        ServerProc("app", "--data", str(data), cpu=server_cpu, log=log) as app,
    ):
        before = pin_self(client_cpu)
        try:
            floors, subjects = run_async(lambda: _rounds(ctx, echo, app, small, large))  # type: ignore[misc]
        finally:
            unpin_self(before)
    result = Result(
        id="B3",
        what="server CPU per token frame, real WS route",
        unit="µs",
        floor_label="bare ASGI WebSocket echo pushing frames, same uvicorn config",
        floor=floors,
        subject=subjects,
        goal="≤ 1.25× floor",
        extra={"tokens_small": small, "tokens_large": large},
    )
    result.checks = [Check("ratio", result.ratio_median, 1.25)]
    return [result]


async def _rounds(ctx, echo: ServerProc, app: ServerProc, small: int, large: int):
    (chat,) = await create_chats(app, 1)
    bare = await open_ws(echo.ws)
    real = await open_chat(app, chat)
    try:

        async def floor_action(n: int) -> None:
            await push(bare, n)

        async def subject_action(n: int) -> None:
            await turn(real, n)

        for _ in range(2):  # warm both paths
            await floor_action(large)
            await subject_action(large)
        floors, subjects = [], []
        for index in range(ctx.rounds):
            pair = [
                (floors, echo, floor_action),
                (subjects, app, subject_action),
            ]
            for sink, server, action in pair if index % 2 == 0 else pair[::-1]:
                sink.append(await cpu_slope(server, action, small, large) * US)
        return floors, subjects
    finally:
        await bare.close()
        await real.close()


def bench_b4(ctx: BenchContext) -> list[Result]:
    """Per-token server CPU with the model client: `LitellmChatModel` through the real route
    against litellm's own stream loop alone (`acompletion` + iterating its chunks) in the
    same kind of server, both on the same fake OpenAI server, interleaved. B4-raw keeps the
    raw httpx + msgspec parse (+ one frame a chunk) as a floor for information.

    Then, in the note (no goal): each litellm setting's effect per chunk on its stream loop
    (`bench.litellm_knobs`, its own pinned process).
    """
    small, large = (10, 60) if ctx.quick else (20, 520)
    server_cpu, client_cpu = _cpus(ctx)
    data = ctx.scratch("b4-data")
    log = ctx.workdir / "servers.log"
    with ServerProc("fakeopenai", cpu=client_cpu, log=log) as fake:
        upstream = f"http://127.0.0.1:{fake.port}/v1"
        with (
            ServerProc("rawsse", "--upstream", upstream, cpu=server_cpu, log=log) as raw,
            ServerProc("litellmloop", "--upstream", upstream, cpu=server_cpu, log=log) as loop,
            ServerProc(
                "app", "--data", str(data), "--litellm", upstream, cpu=server_cpu, log=log
            ) as app,
        ):
            before = pin_self(client_cpu)
            try:
                figures = run_async(lambda: _b4_rounds(ctx, raw, loop, app, small, large))
            finally:
                unpin_self(before)
        knobs: dict[str, Any] | str
        try:
            knobs = _litellm_knobs(ctx, upstream, small, large, server_cpu)
        except Exception as exc:  # informational: B4's own figures stand without it
            knobs = f"{type(exc).__name__}: {exc}"
    raws, loops, subjects = figures  # type: ignore[misc]
    extra = {"tokens_small": small, "tokens_large": large}
    result = Result(
        id="B4",
        what="server CPU per token, litellm through the real route",
        unit="µs",
        floor_label="litellm's own stream loop alone (acompletion + its chunks), same server",
        floor=loops,
        subject=subjects,
        goal="≤ 1.15× floor",
        extra=dict(extra),
    )
    result.checks = [Check("ratio", result.ratio_median, 1.15)]
    raw_row = Result(
        id="B4-raw",
        what="the same, against a raw parse (information)",
        unit="µs",
        floor_label="raw httpx stream + msgspec SSE parse + one frame per chunk",
        floor=raws,
        subject=subjects,
        goal="none (litellm's own cost, upstream's)",
        extra=dict(extra, information=True, litellm_loop_over_raw=median(loops) / median(raws)),
    )
    if isinstance(knobs, str):
        result.note = f"litellm settings: could not measure ({knobs})"
    else:
        result.extra["knobs"] = knobs
        result.note = "litellm settings, per chunk on its loop: " + knob_summary(knobs)
    return [result, raw_row]


def knob_summary(knobs: dict[str, Any]) -> str:
    """ "name −12.3 µs (−6 %)" per knob: the median of the per-round differences."""
    parts = []
    for name, sides in knobs.items():
        deltas = [k - b for b, k in zip(sides["base"], sides["knob"], strict=False)]
        base = median(sides["base"])
        delta = median(deltas)
        parts.append(f"{name} {delta:+.1f} µs ({delta / base * 100:+.0f} %)")
    return "; ".join(parts)


async def _b4_rounds(ctx, raw: ServerProc, loop: ServerProc, app: ServerProc, small, large):
    sockets = {name: await open_ws(server.ws) for name, server in (("raw", raw), ("loop", loop))}
    (chat,) = await create_chats(app, 1)
    real = await open_chat(app, chat)
    try:
        actions: dict[str, tuple[ServerProc, Callable[[int], Awaitable[None]]]] = {
            "raw": (raw, lambda n: push(sockets["raw"], n)),
            "loop": (loop, lambda n: push(sockets["loop"], n)),
            "app": (app, lambda n: turn(real, n)),
        }
        for _server, action in actions.values():  # warm every path
            for _ in range(2):
                await action(large)
        figures: dict[str, list[float]] = {name: [] for name in actions}
        names = list(actions)
        for index in range(ctx.rounds):
            shift = index % len(names)
            for name in names[shift:] + names[:shift]:
                server, action = actions[name]
                figures[name].append(await cpu_slope(server, action, small, large) * US)
        return figures["raw"], figures["loop"], figures["app"]
    finally:
        for ws in (*sockets.values(), real):
            await ws.close()


def _litellm_knobs(
    ctx: BenchContext, upstream: str, small: int, large: int, cpu: int | None
) -> dict[str, Any]:
    """`bench.litellm_knobs` in its own process (pinned like the servers)."""
    import json
    import subprocess
    import sys

    from bench.procs import ROOT

    command = [sys.executable, "-m", "bench.litellm_knobs", upstream, str(ctx.rounds)]
    command += [str(small), str(large), "" if cpu is None else str(cpu)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "failed")
    return json.loads(done.stdout.strip().splitlines()[-1])
