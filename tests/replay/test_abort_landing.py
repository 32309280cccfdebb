"""A learner's abort that lands outside a model stream — after a store write, between a
tool's execution and the next model call, as a turn opens — replays strictly (issue 7).

A turn's sync points (its chat and graph reads and writes, steps) are shielded, so an
abort takes effect right after one of them (or in a model stream); the turn's checkpoint
names which (`cut_after_sync`) and a replay lands it at the same one. An abort frame sent
while a write holds the chat's state is recorded once the write is done: the abort lands
at the turn's next sync point."""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import pytest

from backend.replay.runner import run_replay
from backend.server.dispatch import receive
from backend.server.hub import Connection
from backend.server.recording import recording_tracer
from backend.server.settings import Settings
from backend.server.stores import build_stores
from backend.tracing.player import is_sync
from shared_contracts.trace import CheckpointEvent, InboundFrameEvent, MarkEvent, ModelCallEvent
from shared_contracts.trace_blobs import expand_blobs
from tests.golden.record import recorded_services, settle
from tests.replay.abort_anywhere import (
    LONG,
    GatedFileOps,
    Planner,
    record_abort_anywhere,
    release_when_blocked,
)
from tests.replay.abort_session import frame
from tests.replay.test_abort_replay import _finished

OPENING = b'"text":"plan me a lesson"'
"""In the write that opens the long turn (and every write after it)."""
PLAN_WRITE = b'"goal":"Lists"'
"""In the chat write `plan_init` makes (and every write after it)."""
TOOL_DONE = b'"tool_call_id":"call-plan","tool_name":"plan_init","state":"output-available"'
"""In the write that persists the executed tool call (then a step, then a model call)."""


def _checkpoint(events, scope: str) -> CheckpointEvent:
    return next(e for e in events if isinstance(e, CheckpointEvent) and e.scope == scope)


@pytest.mark.parametrize(
    ("marker", "lands_at"),
    [(OPENING, "step"), (PLAN_WRITE, "write"), (TOOL_DONE, "step")],
    ids=["opening-write", "plan-write", "tool-persisted"],
)
async def test_an_abort_sent_during_a_store_write_replays_identically(
    tmp_path: Path, marker: bytes, lands_at: str
):
    fs = GatedFileOps()
    fs.arm(marker)

    async def in_the_write() -> None:
        await anyio.to_thread.run_sync(fs.entered.wait, 10)

    data = tmp_path / "data"
    meanwhile = functools.partial(release_when_blocked, fs)
    chat = await record_abort_anywhere(data, in_the_write, fs=fs, meanwhile=meanwhile)
    stores = build_stores(data)
    recorded = expand_blobs(await stores.traces.read(chat))
    assert _finished(recorded) == ["stop", "aborted", "stop"]
    assert not any(isinstance(e, ModelCallEvent) and e.cancelled for e in recorded)
    cut = _checkpoint(recorded, "turn:2").cut_after_sync
    syncs = [e for e in recorded if e.scope == "turn:2" and is_sync(e)]
    met, landed = syncs[cut - 1], syncs[cut]
    assert isinstance(met, MarkEvent) and met.mark == "write"  # the write the abort met
    assert isinstance(landed, MarkEvent) and landed.mark == lands_at
    abort = next(e for e in recorded if isinstance(e, InboundFrameEvent) and "abort" in e.frame)
    assert met.seq < abort.seq < landed.seq

    result = await run_replay(stores, chat, tmp_path / "replay")
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    assert result.checkpoints == 3
    assert _checkpoint(result.events, "turn:2").cut_after_sync == cut


async def test_a_recording_keeps_no_per_turn_sync_ordinals(tmp_path: Path):
    """Where an abort lands is counted on the turn's own scope: after turns (an aborted
    one among them, and the reads a turn's task makes after its checkpoint) the recorder
    keeps no counters."""
    settings = Settings(data_dir=tmp_path)
    stores = build_stores(tmp_path)
    tracer = recording_tracer(stores, settings)
    model = Planner()
    async with recorded_services(settings, model, stores, tracer) as services:
        chat = (await services.chats.create_record()).id
        connection = Connection(chat)
        for text in ("hello", LONG, "again"):
            await receive(services, connection, frame("user_message", text=text))
            if text == LONG:
                await model.streaming.wait()
                await receive(services, connection, frame("abort"))
            await settle(services, chat)
            assert tracer.counters() == 0
