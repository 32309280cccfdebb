"""B6: memory per idle connected session and per active session (its chat record held).

Each round starts fresh server processes (floor and subject alternating first), warms
them with a few connections, then reads the server's RSS (after a collection and
`malloc_trim`) before and after N more connections, and again after each of those
chats ran one turn. The records are real ~50 KB chats written with the real chat store.

The RSS delta does not hold the chats' decoded records: the server's start-up job recovery
reads every chat, so its chat cache (8 MiB of files, kept decoded) is already full when the
rounds begin, and a session that opens a chat only trades places in it. What a held record
costs once open chats outgrow that budget is measured apart, in this process (tracemalloc
of one decode of the same record), and reported with the row.
"""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path

import anyio
import msgspec

from bench import synthetic
from bench.context import BenchContext
from bench.harness import Check, Result
from bench.procs import ServerProc
from bench.wsclient import close_all, open_chat, open_ws, run_async, turn
from shared_contracts.chat import ChatRecord

KB = 1024.0
WARM = 5
IDLE_LIMIT_KB = 32.0
BATCH = 10


def _prepare(ctx: BenchContext, count: int) -> tuple[Path, bytes]:
    """A data dir with `WARM + count` ~50 KB chats and `count` empty ones; (its path, one
    record's JSON)."""
    target = 5_000 if ctx.quick else 50_000
    at = synthetic.EPOCH
    full = [synthetic.chat_record(_full(i), target_bytes=target) for i in range(WARM + count)]
    empty = [
        ChatRecord(id=_empty(i), title="empty", created_at=at, updated_at=at) for i in range(count)
    ]
    path = ctx.scratch("b6-template")
    synthetic.write_chats(path, full + empty)
    return path, msgspec.json.encode(full[0])


def decoded_bytes(data: bytes) -> int:
    """Bytes a chat record decoded from `data` holds (tracemalloc: every block the decode
    allocated that is still alive while the record is)."""
    decoder = msgspec.json.Decoder(ChatRecord)
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        record = decoder.decode(data)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        if started:
            tracemalloc.stop()
    del record
    return held


def _full(i: int) -> str:
    return f"chat-mem-{i:04d}"


def _empty(i: int) -> str:
    return f"chat-empty-{i:04d}"


async def _floor_round(server: ServerProc, n: int) -> float:
    warm = [await open_ws(server.ws) for _ in range(WARM)]
    for ws in warm:
        await ws.send("hi")
        await ws.recv()
    before = server.rss()
    sockets = [await open_ws(server.ws) for _ in range(n)]
    for ws in sockets:
        await ws.send("hi")
        await ws.recv()
    after = server.rss()
    await close_all(warm + sockets)
    return (after - before) / n / KB


async def _subject_round(server: ServerProc, n: int) -> tuple[float, float, float]:
    """(KB per idle session on an empty chat, per idle session on a 50 KB chat, per active
    session: that 50 KB chat after one turn)."""
    warm = [await open_chat(server, _full(i)) for i in range(WARM)]
    for ws in warm:
        await turn(ws, 100)
    rss0 = server.rss()
    empty = [await open_chat(server, _empty(i)) for i in range(n)]
    rss1 = server.rss()
    full = [await open_chat(server, _full(WARM + i)) for i in range(n)]
    rss2 = server.rss()
    for start in range(0, n, BATCH):
        async with anyio.create_task_group() as tg:
            for ws in full[start : start + BATCH]:
                tg.start_soon(turn, ws, 100)
    rss3 = server.rss()
    await close_all(warm + empty + full)
    return (rss1 - rss0) / n / KB, (rss2 - rss1) / n / KB, (rss3 - rss1) / n / KB


def bench_b6(ctx: BenchContext) -> list[Result]:
    """Two rows: KB per idle session vs a bare connection; KB per active session vs the
    record's JSON size."""
    n = 4 if ctx.quick else 100
    template, record_json = _prepare(ctx, WARM + n)
    record_bytes = len(record_json)
    decoded_kb = decoded_bytes(record_json) / KB
    log = ctx.workdir / "servers.log"
    floors, idles, loaded, actives = [], [], [], []
    for index in range(ctx.rounds):
        data = ctx.workdir / "b6-data"
        shutil.rmtree(data, ignore_errors=True)
        shutil.copytree(template, data)  # type: ignore[arg-type]
        steps = ["floor", "subject"] if index % 2 == 0 else ["subject", "floor"]
        for step in steps:
            if step == "floor":
                with ServerProc("echo", log=log) as echo:
                    floors.append(run_async(lambda s=echo: _floor_round(s, n)))
            else:
                with ServerProc("app", "--data", str(data), log=log) as app:
                    idle, held, active = run_async(lambda s=app: _subject_round(s, n))  # type: ignore[misc]
                    idles.append(idle)
                    loaded.append(held)
                    actives.append(active)
    idle_row = Result(
        id="B6-idle",
        what=f"memory per idle connected session ({n} sessions, empty chats)",
        unit="KB",
        floor_label="bare ASGI WebSocket connection, same uvicorn config",
        floor=floors,  # type: ignore[arg-type]
        subject=idles,
        goal=f"≤ {IDLE_LIMIT_KB:.0f} KB",
        extra={"idle_kb_on_50kb_chat": loaded},
        note=f"idle on a {record_bytes / KB:.0f} KB chat (snapshot sent): "
        f"{median_of(loaded):.1f} KB per session (median)",
    )
    idle_row.checks = [Check("KB", median_of(idles), IDLE_LIMIT_KB)]
    record_kb = record_bytes / KB
    active_row = Result(
        id="B6-active",
        what=f"memory per active session ({record_kb:.0f} KB record, 1 turn each)",
        unit="KB",
        floor_label="the chat record's JSON size",
        floor=[record_kb] * len(actives),
        subject=actives,
        goal="≤ 2× record",
        extra={"record_decoded_kb": decoded_kb},
        note="the server's own work counts too: extraction runs after a turn once enough "
        "graded answers wait, so an active session also grows the graph state. Not in "
        f"this delta: the held record decoded, {decoded_kb:.1f} KB "
        f"({decoded_kb / record_kb:.2f}× its JSON), which start-up already put in the chat "
        "cache; a session adds it once open chats outgrow the cache's 8 MiB",
    )
    active_row.checks = [Check("ratio", active_row.ratio_median, 2.0)]
    return [idle_row, active_row]


def median_of(values: list[float]) -> float:
    from bench.harness import median

    return median(values)
