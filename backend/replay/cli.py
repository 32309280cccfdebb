"""`harness replay CHAT_ID [--from-turn N --model M]` · `harness replay diff A B`."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import anyio

from backend.agent.roles import OFFLINE
from backend.replay.diff import ReplayResult, diff_sessions
from backend.replay.fork import fork_session
from backend.replay.runner import run_replay
from backend.server.stores import Stores, open_local_stores
from backend.tracing.ports import read_expanded


def cli(
    data_dir: Path,
    ids: Sequence[str],
    from_turn: int | None,
    model: str | None,
    template: Path | None,
    database_url: str | None = None,
) -> int:
    """`harness replay CHAT_ID [--from-turn N --model M]` · `harness replay diff A B`: the
    sessions recorded in `data_dir`, or in the database at `database_url`."""
    if ids and ids[0] == "diff" and len(ids) != 3:
        print("usage: harness replay diff CHAT_A CHAT_B")
        return 2
    if ids[:1] != ["diff"] and len(ids) != 1:
        print("usage: harness replay CHAT_ID [--from-turn N --model M]")
        return 2
    body = template.read_text("utf-8") if template else None

    async def run() -> int:
        async with open_local_stores(data_dir, database_url) as source:
            if ids[0] == "diff":
                return await _diff(source, ids[1], ids[2])
            return await _replay(source, ids[0], from_turn, model, body)

    return anyio.run(run)


async def _replay(
    source: Stores, chat_id: str, from_turn: int | None, model: str | None, body: str | None
) -> int:
    with tempfile.TemporaryDirectory(prefix="harness-replay-") as tmp:
        if from_turn is not None:
            spec = model or OFFLINE
            fork = await fork_session(source, chat_id, from_turn, spec, Path(tmp))
            print(f"forked {chat_id} at turn {from_turn} onto {spec}: new chat {fork.fork_id}")
            return 0
        result = await run_replay(source, chat_id, Path(tmp), template=body)
    return _report(chat_id, result)


async def _diff(source: Stores, a: str, b: str) -> int:
    first = read_expanded(await source.traces.read(a), a)
    second = read_expanded(await source.traces.read(b), b)
    lines = diff_sessions(first, second, (a, b))
    print("\n".join(lines) if lines else f"{a} and {b}: no per-turn differences")
    return 1 if lines else 0


def _report(chat_id: str, result: ReplayResult) -> int:
    if result.divergence is not None:
        print(result.divergence.render())
        return 1
    print(
        f"replay {chat_id}: identical ({result.compared} events, {result.frames} frames,"
        f" {result.checkpoints} checkpoints)"
    )
    if result.shutdown_cut:
        print(
            f"recording ends with a shutdown that cut {', '.join(result.shutdown_cut)}:"
            " the replay shut down there too"
        )
    elif result.ends_inside_turn:
        print(
            f"recording ends inside turn {result.ends_inside_turn} (the server stopped"
            " mid-turn): replayed up to there"
        )
    return 0
