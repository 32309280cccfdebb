"""Two sockets on one chat racing an answer and an abort replay identically (issue 7).

The race: socket A's answer frame is recorded, then socket B's abort, and only then does
the answer read its question. A replay that fed both sockets' frames one after another (as
one `learner` unit) waited for the abort before the answer's read, and the abort only after
the answer: it stalled. Each socket is its own unit (`learner:<n>`), fed on its own."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio

from backend.agent.offline.tutor import OfflineTutor
from backend.replay.runner import run_replay
from backend.server.dispatch import receive
from backend.server.hub import Connection
from backend.server.recording import recording_tracer
from backend.server.settings import Settings
from backend.server.stores import build_stores
from backend.store.fileops import OsFileOps
from backend.store.record_cache import FileIdentity
from backend.tracing.player import is_sync
from shared_contracts.trace import InboundFrameEvent, MarkEvent
from shared_contracts.trace_blobs import expand_blobs
from tests.golden.record import learner_frame, recorded_services, settle
from tests.replay.abort_session import frame


class GatedReads(OsFileOps):
    """The OS, except that once `arm`ed with a file name, that file's next load misses the
    record cache (its identity reads as changed once) and its read waits in its worker
    thread until `release` is set; `entered` is set when it starts waiting."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self._name: str | None = None
        self._stale = False

    def arm(self, name: str) -> None:
        self._name, self._stale = name, True

    def identity(self, path: str) -> FileIdentity:
        real = super().identity(path)
        if self._stale and path.endswith(self._name or "\0"):
            self._stale = False
            return real._replace(ctime_ns=real.ctime_ns - 1)
        return real

    def read(self, path: str, offset: int = 0, length: int = -1) -> bytes:
        if self._name is not None and not self._stale and path.endswith(self._name):
            self._name = None
            self.entered.set()
            self.release.wait(timeout=10)
        return super().read(path, offset, length)


async def _release_when_blocked(fs: GatedReads) -> None:
    """Once every task waits (A's frame on its gated read, holding the chat's state; B's
    abort frame on that state), let the read finish."""
    await anyio.wait_all_tasks_blocked()
    fs.release.set()


async def record_answer_abort_race(data_dir: Path) -> str:
    """A chat whose question is answered on socket A while socket B sends an abort, the
    abort recorded between the answer's frame and its read of the question."""
    fs = GatedReads()
    settings = Settings(data_dir=data_dir)
    stores = build_stores(data_dir, fs=fs)
    tracer = recording_tracer(stores, settings)
    async with recorded_services(settings, OfflineTutor(), stores, tracer) as services:
        record = await services.chats.create_record()
        a, b = Connection(record.id), Connection(record.id)
        await receive(services, a, frame("user_message", text="teach me photosynthesis"))
        await settle(services, record.id)
        answer = learner_frame(await stores.chats.get(record.id), "right")
        fs.arm(f"{record.id}.json")
        async with anyio.create_task_group() as tg:
            tg.start_soon(receive, services, a, answer)
            await anyio.to_thread.run_sync(fs.entered.wait)
            tg.start_soon(receive, services, b, frame("abort"))
            tg.start_soon(_release_when_blocked, fs)
        await settle(services, record.id)
        await receive(services, b, learner_frame(await stores.chats.get(record.id), "right"))
        await settle(services, record.id)
        await tracer.flush(record.id)
    return record.id


async def test_an_answer_and_an_abort_racing_on_two_sockets_replay_identically(tmp_path: Path):
    data = tmp_path / "data"
    chat = await record_answer_abort_race(data)
    stores = build_stores(data)
    recorded = expand_blobs(await stores.traces.read(chat))
    learner = [e for e in recorded if is_sync(e) and e.scope.startswith("learner")]
    kinds = [
        "abort" if isinstance(e, InboundFrameEvent) and '"abort"' in e.frame else type(e).__name__
        for e in learner
    ]
    # The race happened: the abort came between the answer's frame and its read.
    race = kinds.index("abort")
    assert kinds[race - 1] == "InboundFrameEvent"
    assert isinstance(learner[race + 1], MarkEvent) and learner[race + 1].mark == "read"
    result = await run_replay(stores, chat, tmp_path / "replay", stall_s=2.0)
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    assert result.checkpoints == 3
    # ...with every sync point where it was: the abort between the answer and its read.
    assert _sync_order(result.events) == _sync_order(recorded)
    # Each socket is its own unit: the answer's frame and read in one, the abort in another.
    assert learner[race - 1].scope == learner[race + 1].scope != learner[race].scope
    assert {e.scope for e in learner} == {"learner:0", "learner:1"}


def _sync_order(events) -> list[tuple[str, str]]:
    """Each sync point as (unit, what): a frame's text, a mark's name, an event's type."""
    out = []
    for e in events:
        if is_sync(e):
            what = e.frame if isinstance(e, InboundFrameEvent) else getattr(e, "mark", "")
            out.append((e.scope, what or type(e).__name__))
    return out
