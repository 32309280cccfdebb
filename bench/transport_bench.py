"""Server CPU per streamed token: B3 through the real WebSocket route with an instant
model, B4 with the real litellm client against a loopback fake OpenAI stream.

Servers run in their own processes on the same uvicorn config (pinned to CPU 1, the client
to CPU 0 when there are two); CPU is the server process's own `process_time`, read before
and after, and the per-token figure is a slope between a short and a long turn so the
fixed cost of a turn cancels out.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bench.context import BenchContext
from bench.harness import Check, Result, median
from bench.procs import ServerProc, pin_self, unpin_self
from bench.serve import raw_sse_texts
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
    """Per-token server CPU with the model client: litellm through the real route vs raw
    httpx + msgspec SSE parsing + one frame, both against the same fake OpenAI server.

    Then, reported in `extra` and the note (no goal): the adapter's own CPU per chunk with
    no server around it, against raw httpx + msgspec in that same process.
    """
    small, large = (10, 60) if ctx.quick else (20, 520)
    server_cpu, client_cpu = _cpus(ctx)
    data = ctx.scratch("b4-data")
    log = ctx.workdir / "servers.log"
    with ServerProc("fakeopenai", cpu=client_cpu, log=log) as fake:
        upstream = f"http://127.0.0.1:{fake.port}/v1"
        with (
            ServerProc("rawsse", "--upstream", upstream, cpu=server_cpu, log=log) as raw,
            ServerProc(
                "app", "--data", str(data), "--litellm", upstream, cpu=server_cpu, log=log
            ) as app,
        ):
            before = pin_self(client_cpu)
            try:
                floors, subjects = run_async(lambda: _rounds(ctx, raw, app, small, large))  # type: ignore[misc]
            finally:
                unpin_self(before)
        try:
            alone: dict[str, list[float]] | str = _litellm_alone(
                ctx, upstream, small, large, server_cpu
            )
        except Exception as exc:  # informational: B4's own figures stand without it
            alone = f"{type(exc).__name__}: {exc}"
    result = Result(
        id="B4",
        what="server CPU per token incl. model client (litellm)",
        unit="µs",
        floor_label="raw httpx stream + msgspec SSE parse + one frame per chunk",
        floor=floors,
        subject=subjects,
        goal="≤ 3× floor",
        extra={"tokens_small": small, "tokens_large": large},
    )
    result.checks = [Check("ratio", result.ratio_median, 3.0)]
    if isinstance(alone, str):
        result.note = f"adapter alone: could not measure ({alone})"
    else:
        parse, adapter = median(alone["floor"]), median(alone["subject"])
        result.extra["alone"] = alone
        result.note = (
            f"adapter alone (LitellmChatModel.stream, no server): {adapter:.1f} µs/chunk vs "
            f"{parse:.1f} µs raw httpx + msgspec parse in the same process "
            f"({adapter / parse:.1f}×)"
        )
    return [result]


def _litellm_alone(
    ctx: BenchContext, upstream: str, small: int, large: int, cpu: int | None
) -> dict[str, list[float]]:
    """B4 without the server: its own process (pinned like the servers) times the adapter's
    stream against raw httpx + msgspec on the same fake server, as a per-chunk slope."""
    import json
    import subprocess
    import sys

    from bench.procs import ROOT

    command = [sys.executable, "-m", "bench.transport_bench", upstream, str(ctx.rounds)]
    command += [str(small), str(large), "" if cpu is None else str(cpu)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "failed")
    return json.loads(done.stdout.strip().splitlines()[-1])


async def _alone_rounds(upstream: str, rounds: int, small: int, large: int) -> dict:
    import gc
    import time

    import httpx

    from backend.agent.litellm_model import LitellmChatModel
    from bench.harness import ainterleave
    from shared_contracts.model_io import ModelMessage, ModelRequest

    model = LitellmChatModel("openai/fake", api_base=upstream, api_key="bench", max_attempts=1)
    async with httpx.AsyncClient(base_url=upstream, timeout=60.0) as client:

        async def raw(n: int) -> None:
            texts = [text async for text in raw_sse_texts(client, n)]
            assert texts

        async def adapter(n: int) -> None:
            messages = [ModelMessage(role="user", content=f"tokens:{n}")]
            async for _ in model.stream(ModelRequest(role="teacher", messages=messages)):
                pass

        def slope(action: Callable[[int], Awaitable[None]]) -> Callable[[], Awaitable[float]]:
            async def measure() -> float:
                spent = []
                for n in (small, large):
                    gc.collect()
                    start = time.process_time()
                    await action(n)
                    spent.append(time.process_time() - start)
                return (spent[1] - spent[0]) / (large - small) * US

            return measure

        for _ in range(2):  # warm both paths (and litellm's first-call setup)
            await raw(large)
            await adapter(large)
        floors, subjects = await ainterleave(rounds, slope(raw), slope(adapter))
    return {"floor": floors, "subject": subjects}


if __name__ == "__main__":  # the B4-litellm measuring process (see `_litellm_alone`)
    import json
    import os
    import sys

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    upstream, rounds, small, large, cpu = sys.argv[1:6]
    if cpu:
        os.sched_setaffinity(0, {int(cpu)})
    figures = run_async(lambda: _alone_rounds(upstream, int(rounds), int(small), int(large)))
    print(json.dumps(figures))
