"""B15: the first turn after `harness serve` starts, against a later turn of the same chat.

Each round starts a fresh `harness serve` (its own data dir, the fake OpenAI tutor as its
litellm model), waits for `/healthz`, then runs turns of 20 streamed tokens on one chat:
the first turn is the subject, the third the floor. Whatever the first turn pays once
(imports, a tokenizer's first load, clients and caches built on first use) shows as the
ratio; the goal is that start-up pays it, before the server answers.
"""

from __future__ import annotations

import time

from bench.context import BenchContext
from bench.harness import Check, Result, median
from bench.procs import ServerProc
from bench.ui_stack import _stop, start_api, tree_cpu
from bench.wsclient import create_chats, open_chat, run_async, turn

MS = 1000.0
TOKENS = 20
LATER = 3


class _Api:
    """Enough of `ServerProc` for `bench.wsclient` (its URLs)."""

    def __init__(self, url: str) -> None:
        self.http = url
        self.ws = url.replace("http://", "ws://")


async def _turns(api: _Api, pid: int, count: int) -> list[tuple[float, float]]:
    """(latency ms, server CPU ms) of `count` turns on one new chat."""
    (chat,) = await create_chats(api, 1)  # type: ignore[arg-type]  # duck-typed ServerProc
    ws = await open_chat(api, chat)  # type: ignore[arg-type]
    try:
        out = []
        for _ in range(count):
            cpu = tree_cpu(pid)
            start = time.perf_counter()
            await turn(ws, TOKENS)
            out.append(((time.perf_counter() - start) * MS, (tree_cpu(pid) - cpu) * MS))
        return out
    finally:
        await ws.close()


def bench_b15(ctx: BenchContext) -> list[Result]:
    log = ctx.workdir / "servers.log"
    firsts: list[float] = []
    laters: list[float] = []
    starts: list[float] = []
    cpu_first: list[float] = []
    cpu_later: list[float] = []
    with ServerProc("fakeopenai", log=log) as fake:
        model_url = f"http://127.0.0.1:{fake.port}/v1"
        for index in range(ctx.rounds):
            data = ctx.scratch(f"b15-data-{index}")
            began = time.perf_counter()
            proc, url = start_api(data, model_url, log)
            starts.append(time.perf_counter() - began)
            try:
                turns = run_async(lambda url=url, pid=proc.pid: _turns(_Api(url), pid, LATER))
            finally:
                _stop(proc)
            (first, first_cpu), *_, (later, later_cpu) = turns  # type: ignore[misc]
            firsts.append(first)
            laters.append(later)
            cpu_first.append(first_cpu)
            cpu_later.append(later_cpu)
    result = Result(
        id="B15",
        what="first turn after `harness serve` starts",
        unit="ms",
        floor_label=f"turn {LATER} of the same chat (the same {TOKENS}-token answer)",
        floor=laters,
        subject=firsts,
        goal="≤ 1.5× floor",
        extra={"start_s": starts, "cpu_first_ms": cpu_first, "cpu_later_ms": cpu_later},
    )
    result.checks = [Check("ratio", result.ratio_median, 1.5)]
    result.note = (
        f"start-up to /healthz {median(starts):.2f} s; server CPU in the first turn "
        f"{median(cpu_first):.0f} ms against {median(cpu_later):.0f} ms in turn {LATER}"
    )
    return [result]
