"""A session whose server was shut down mid-turn replays identically, its shutdown
included: the recording holds each unit's cancellation path (a turn's last write,
checkpoint and `turn_finished`), and the replay shuts its own services down where the
recording did (issue 7). An older trace, written before those paths were, or one cut
short, replays up to where it ends."""

from __future__ import annotations

import functools
import time
from pathlib import Path

import anyio
import msgspec
import pytest

from backend.replay.cli import cli
from backend.replay.runner import run_replay
from backend.server.stores import build_stores
from backend.tracing.player import SHUTDOWN_KEY
from shared_contracts.trace import (
    CheckpointEvent,
    MarkEvent,
    ModelCallEvent,
    OutboundFrameEvent,
)
from shared_contracts.trace_blobs import expand_blobs
from tests.replay.abort_anywhere import (
    GatedFileOps,
    Planner,
    record_shutdown_mid_turn,
    release_when_blocked,
)

STALL_S = 2.0
"""The replay's stall budget here: a replay that waits it out fails the time check."""


def _frames(events) -> list[str]:
    return [e.frame for e in events if isinstance(e, OutboundFrameEvent)]


async def _replayed(stores, chat: str, work: Path):
    started = time.perf_counter()
    result = await run_replay(stores, chat, work, stall_s=STALL_S)
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    assert time.perf_counter() - started < STALL_S / 2  # no stall
    return result


async def _stopped_mid_stream(data: Path) -> tuple[str, list]:
    model = Planner(pause_s=0.05)
    chat = await record_shutdown_mid_turn(data, model.streaming.wait, model=model)
    return chat, expand_blobs(await build_stores(data).traces.read(chat))


async def test_a_server_stopped_mid_stream_replays_through_its_shutdown(tmp_path: Path):
    """The shutdown cut the teacher's stream: the recording has the cancelled call, then
    the turn's last write and checkpoint and its `turn_finished` ("error": not an abort).
    The replay holds the call at its cut, shuts down, and emits all of it again."""
    chat, recorded = await _stopped_mid_stream(tmp_path / "data")
    (cut,) = [e for e in recorded if isinstance(e, ModelCallEvent) and e.cancelled]
    assert cut.scope == "turn:2"
    assert [e.turn for e in recorded if isinstance(e, CheckpointEvent)] == [1, 2]
    assert '"reason":"error"' in _frames(recorded)[-1]
    result = await _replayed(build_stores(tmp_path / "data"), chat, tmp_path / "replay")
    assert result.shutdown_cut == ["turn:2"]
    assert _frames(result.events) == _frames(recorded)
    assert result.checkpoints == 2


@pytest.mark.parametrize("idle_abort", [False, True], ids=["", "after_an_idle_abort"])
async def test_a_server_stopped_during_a_write_replays_through_its_shutdown(
    tmp_path: Path, idle_abort: bool
):
    """Stopped while the turn's (shielded) opening write was on disk: the turn opened,
    then took the shutdown right after its next sync point (`cut_after_sync`, no abort
    frame); the replay holds it there (it waited for an abort before) and shuts down.
    An abort the learner sent before the turn was claimed did nothing: it is not taken
    for the one that cut it."""
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
        idle_abort=idle_abort,
    )
    stores = build_stores(tmp_path / "data")
    recorded = expand_blobs(await stores.traces.read(chat))
    last = [e for e in recorded if isinstance(e, CheckpointEvent)][-1]
    assert last.turn == 2 and last.cut_after_sync >= 0
    result = await _replayed(stores, chat, tmp_path / "replay")
    assert result.shutdown_cut == ["turn:2"]
    assert _frames(result.events) == _frames(recorded)


def _as_written_before(events: list, end: int) -> list:
    """`events` before seq `end`, as a recorder that did not write shutdown paths left
    them (its config without the marker)."""
    out = []
    for event in events:
        if event.seq >= end:
            break
        if isinstance(event, MarkEvent) and SHUTDOWN_KEY in event.config:
            config = {k: v for k, v in event.config.items() if k != SHUTDOWN_KEY}
            event = msgspec.structs.replace(event, config=config)
        out.append(event)
    return out


async def test_an_older_trace_cut_mid_stream_replays_what_the_learner_saw(tmp_path: Path):
    """Before shutdown paths were written, the call in flight was never written either:
    the replay streams the text the learner got from it (the recorded frames) and stops
    there; the turn is held where the recording ends."""
    chat, recorded = await _stopped_mid_stream(tmp_path / "data")
    (cut,) = [e for e in recorded if isinstance(e, ModelCallEvent) and e.cancelled]
    old = _as_written_before(recorded, cut.seq)
    await build_stores(tmp_path / "old").traces.append(chat, old)
    result = await _replayed(build_stores(tmp_path / "old"), chat, tmp_path / "replay")
    assert result.ends_inside_turn == 2 and not result.shutdown_cut
    deltas = [f for f in _frames(old) if '"text_delta"' in f]
    assert sum("s0 " in d or "s1 " in d for d in deltas) >= 2
    assert [f for f in _frames(result.events) if '"text_delta"' in f] == deltas


async def test_a_trace_cut_short_replays_up_to_where_it_ends(tmp_path: Path):
    """A trace with the marker but cut short (the process died mid-turn: no checkpoint,
    no cancellation path) is no recorded shutdown: it replays up to where it ends."""
    chat, recorded = await _stopped_mid_stream(tmp_path / "data")
    (cut,) = [e for e in recorded if isinstance(e, ModelCallEvent) and e.cancelled]
    short = [e for e in recorded if e.seq < cut.seq]
    await build_stores(tmp_path / "short").traces.append(chat, short)
    result = await _replayed(build_stores(tmp_path / "short"), chat, tmp_path / "replay")
    assert result.ends_inside_turn == 2 and not result.shutdown_cut


def test_the_cli_says_where_the_shutdown_cut_and_exits_0(tmp_path: Path, capsys):
    chat, _ = anyio.run(_stopped_mid_stream, tmp_path / "data")
    assert cli(tmp_path / "data", [chat], None, None, None) == 0
    out = capsys.readouterr().out
    assert f"replay {chat}: identical" in out
    assert "recording ends with a shutdown that cut turn:2" in out
