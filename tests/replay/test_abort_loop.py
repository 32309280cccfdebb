"""Soak: live sessions whose learner aborts the long turn at spread-out moments — in a
model stream, after a slow store write, between a tool and the next model call — or whose
server shuts down then, each replays strictly (issue 7). `make soak` runs them; one
session takes ~0.2 s."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import anyio
import pytest

from backend.replay.runner import run_replay
from backend.server.stores import build_stores
from shared_contracts.trace import CheckpointEvent, ModelCallEvent
from shared_contracts.trace_blobs import expand_blobs
from tests.replay.abort_anywhere import (
    Planner,
    SlowFileOps,
    after,
    record_abort_anywhere,
    record_shutdown_mid_turn,
)

SESSIONS = 40
SPAN_S = 0.035
"""About the long turn's length on the slow disk: later aborts find it finished."""
GOLDEN = 0.6180339887


def delays() -> list[float]:
    """Spread over the span without clumping (golden-ratio steps), the same every run."""
    return [((i * GOLDEN) % 1.0) * SPAN_S for i in range(SESSIONS)]


async def _one(root: Path, delay_s: float) -> tuple[str, str]:
    """(where the abort landed, the first divergence or "")."""
    chat = await record_abort_anywhere(root / "data", after(delay_s))
    stores = build_stores(root / "data")
    recorded = expand_blobs(await stores.traces.read(chat))
    cut = next(e for e in recorded if isinstance(e, CheckpointEvent) and e.turn == 2)
    streams = [e.key for e in recorded if isinstance(e, ModelCallEvent) and e.cancelled]
    landed = f"sync:{cut.cut_after_sync}" if cut.cut_after_sync >= 0 else ""
    landed = landed or (f"stream:{streams[0]}" if streams else "none")
    result = await run_replay(stores, chat, root / "replay")
    return landed, "" if result.ok else result.divergence.render()  # type: ignore[union-attr]


@pytest.mark.soak
def test_aborts_at_any_moment_of_a_turn_replay_identically():
    landings: list[str] = []
    diverged: list[str] = []
    for delay in delays():
        with tempfile.TemporaryDirectory() as tmp:
            # Its own event loop (and context) per session, as each socket has its task.
            landed, divergence = anyio.run(_one, Path(tmp), delay)
        landings.append(landed)
        if divergence:
            diverged.append(f"abort after {delay * 1000:.1f} ms ({landed}):\n{divergence}")
    assert not diverged, f"{len(diverged)} of {SESSIONS} diverged; first:\n{diverged[0]}"
    # The loop covers what it claims: aborts landing at sync points and in streams.
    assert sum(x.startswith("sync:") for x in landings) >= SESSIONS // 5, landings
    assert any(x.startswith("stream:") for x in landings), landings


async def _stopped(root: Path, delay_s: float) -> tuple[int, float, str]:
    """(the turn the shutdown cut, seconds the replay took, its first divergence or "")."""
    fs = SlowFileOps()
    fs.slow = True
    chat = await record_shutdown_mid_turn(root / "data", after(delay_s), model=Planner(), fs=fs)
    started = time.perf_counter()
    result = await run_replay(build_stores(root / "data"), chat, root / "replay", stall_s=2.0)
    took = time.perf_counter() - started
    divergence = "" if result.ok else result.divergence.render()  # type: ignore[union-attr]
    cut = [int(unit.removeprefix("turn:")) for unit in result.shutdown_cut if "turn:" in unit]
    return (cut or [0])[0], took, divergence


@pytest.mark.soak
def test_a_server_stopped_at_any_moment_of_a_turn_replays_through_its_shutdown():
    ends: list[int] = []
    slowest = 0.0
    diverged: list[str] = []
    for delay in delays():
        with tempfile.TemporaryDirectory() as tmp:
            end, took, divergence = anyio.run(_stopped, Path(tmp), delay)
        ends.append(end)
        slowest = max(slowest, took)
        if divergence:
            diverged.append(f"stopped after {delay * 1000:.1f} ms:\n{divergence}")
    assert not diverged, f"{len(diverged)} of {SESSIONS} diverged; first:\n{diverged[0]}"
    assert ends.count(2) >= SESSIONS // 2, ends  # most cut the long turn
    assert slowest < 1.0  # none waited out its 2 s stall budget
