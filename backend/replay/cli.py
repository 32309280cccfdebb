"""`harness replay CHAT_ID [--from-turn N --model M]` · `harness replay diff A B`."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import anyio

from backend.replay.diff import ReplayResult, diff_sessions
from backend.replay.fork import fork_session
from backend.replay.runner import run_replay
from backend.server.models import OFFLINE
from backend.server.stores import Stores, build_stores
from backend.tracing.ports import read_expanded
from shared_contracts.trace import AnyTraceEvent


def cli(
    data_dir: Path,
    ids: Sequence[str],
    from_turn: int | None,
    model: str | None,
    template: Path | None,
) -> int:
    """`harness replay CHAT_ID [--from-turn N --model M]` · `harness replay diff A B`."""
    source = build_stores(data_dir)
    if ids and ids[0] == "diff":
        if len(ids) != 3:
            print("usage: harness replay diff CHAT_A CHAT_B")
            return 2
        return _diff(source, ids[1], ids[2])
    if len(ids) != 1:
        print("usage: harness replay CHAT_ID [--from-turn N --model M]")
        return 2
    chat_id = ids[0]
    body = template.read_text("utf-8") if template else None
    with tempfile.TemporaryDirectory(prefix="harness-replay-") as tmp:
        if from_turn is not None:
            spec = model or OFFLINE
            result = anyio.run(fork_session, source, chat_id, from_turn, spec, Path(tmp))
            print(f"forked {chat_id} at turn {from_turn} onto {spec}: new chat {result.fork_id}")
            return 0
        result = anyio.run(lambda: run_replay(source, chat_id, Path(tmp), template=body))
    return _report(chat_id, result)


def _diff(source: Stores, a: str, b: str) -> int:
    async def both() -> tuple[list[AnyTraceEvent], list[AnyTraceEvent]]:
        first, second = await source.traces.read(a), await source.traces.read(b)
        return read_expanded(first, a), read_expanded(second, b)

    first, second = anyio.run(both)
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
