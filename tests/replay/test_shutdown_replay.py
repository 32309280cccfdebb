"""A session whose server was shut down mid-turn (the recording ends inside a turn)
replays what was recorded and stops where the recording stops (issue 7)."""

from __future__ import annotations

import functools
import time
from pathlib import Path

import anyio

from backend.server.replay import cli, run_replay
from backend.server.stores import build_stores
from shared_contracts.trace import CheckpointEvent, OutboundFrameEvent
from shared_contracts.trace_blobs import expand_blobs
from tests.replay.abort_anywhere import (
    GatedFileOps,
    Planner,
    record_shutdown_mid_turn,
    release_when_blocked,
)

STALL_S = 2.0
"""The replay's stall budget here: a replay that waits it out fails the time check."""


def _deltas(events) -> list[str]:
    frames = [e.frame for e in events if isinstance(e, OutboundFrameEvent)]
    return [f for f in frames if '"text_delta"' in f]


async def _replayed(tmp_path: Path, chat: str):
    stores = build_stores(tmp_path / "data")
    recorded = expand_blobs(await stores.traces.read(chat))
    assert [e.turn for e in recorded if isinstance(e, CheckpointEvent)] == [1]  # ends in 2
    started = time.perf_counter()
    result = await run_replay(stores, chat, tmp_path / "replay", stall_s=STALL_S)
    took = time.perf_counter() - started
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    assert result.ends_inside_turn == 2
    assert took < STALL_S / 2  # it stops where the recording stops: no stall
    return recorded, result


async def test_a_server_stopped_mid_stream_replays_what_the_learner_saw(tmp_path: Path):
    """The call in flight was never written: the replay streams the text the learner got
    from it (the recorded frames) and stops there."""
    model = Planner(pause_s=0.05)
    chat = await record_shutdown_mid_turn(tmp_path / "data", model.streaming.wait, model=model)
    recorded, result = await _replayed(tmp_path, chat)
    turn2 = [d for d in _deltas(recorded) if "s0 " in d or "s1 " in d]
    assert len(turn2) >= 2 and _deltas(result.events) == _deltas(recorded)


async def test_a_server_stopped_during_a_write_replays_up_to_it(tmp_path: Path):
    """Stopped while the turn's opening write was on disk: its clock and id were drawn,
    its sync point never recorded; the replay holds the turn there, at once."""
    fs = GatedFileOps()
    fs.arm(b'"text":"plan me a lesson"')

    async def in_the_write() -> None:
        await anyio.to_thread.run_sync(fs.entered.wait, 10)

    chat = await record_shutdown_mid_turn(
        tmp_path / "data",
        in_the_write,
        model=Planner(),
        fs=fs,
        meanwhile=functools.partial(release_when_blocked, fs),  # it ends during shutdown
    )
    recorded, _ = await _replayed(tmp_path, chat)
    turn2 = [e for e in recorded if e.scope == "turn:2"]
    assert [type(e).__name__ for e in turn2] == ["MarkEvent", "ClockEvent", "IdEvent"]


def test_the_cli_says_where_the_recording_ends_and_exits_0(tmp_path: Path, capsys):
    model = Planner(pause_s=0.05)
    chat = anyio.run(
        lambda: record_shutdown_mid_turn(tmp_path / "data", model.streaming.wait, model=model)
    )
    assert cli(tmp_path / "data", [chat], None, None, None) == 0
    out = capsys.readouterr().out
    assert f"replay {chat}: identical" in out and "recording ends inside turn 2" in out
