"""The recorder forgets idle chats (issue 7): its per-chat tables (write and state locks,
socket numbering, sequence and interning state, counters of finished units) do not grow
with every chat ever seen, and a chat that comes back records and replays as before."""

from __future__ import annotations

from pathlib import Path

from backend.agent.offline.tutor import OfflineTutor
from backend.replay.runner import run_replay
from backend.server.dispatch import receive
from backend.server.recording import recording_tracer
from backend.server.settings import Settings
from backend.server.stores import build_stores
from backend.tracing.player import is_sync
from shared_contracts.trace import InboundFrameEvent
from shared_contracts.trace_blobs import expand_blobs
from tests.golden.record import learner_frame, recorded_services, settle
from tests.replay.abort_session import frame


async def test_two_hundred_chats_opened_and_closed_leave_no_entries_and_one_comes_back(
    tmp_path: Path,
):
    data = tmp_path / "data"
    settings = Settings(data_dir=data)
    stores = build_stores(data)
    tracer = recording_tracer(stores, settings)
    async with recorded_services(settings, OfflineTutor(), stores, tracer) as services:
        lesson = await services.chats.create_record()
        first = services.hub.connect(lesson.id)
        await receive(services, first, frame("user_message", text="teach me fractions"))
        await settle(services, lesson.id)
        services.hub.disconnect(first)
        for _ in range(200):
            record = await services.chats.create_record()
            socket = services.hub.connect(record.id)
            await receive(services, socket, frame("ping"))
            services.hub.disconnect(socket)
        assert tracer.chat_entries() > 400  # a state lock and a socket count a chat, at least
        assert await tracer.sweep() == 201
        assert tracer.chat_entries() == 0
        assert await tracer.sweep() == 0
        # The lesson comes back on a new socket: numbered from 0 again, its trace goes on.
        again = services.hub.connect(lesson.id)
        answer = learner_frame(await stores.chats.get(lesson.id), "right")
        await receive(services, again, answer)
        await settle(services, lesson.id)
        await tracer.flush(lesson.id)
    events = expand_blobs(await stores.traces.read(lesson.id))
    assert [e.seq for e in events] == list(range(len(events)))  # no seq reused or skipped
    frames = [e for e in events if isinstance(e, InboundFrameEvent)]
    assert [f.scope for f in frames] == ["learner:0", "learner:0"]
    assert frames[1].frame == answer
    result = await run_replay(stores, lesson.id, tmp_path / "replay", stall_s=2.0)
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    assert result.checkpoints == 2
    # Every other chat's trace holds its one frame, written by the sweep.
    pinged = await stores.traces.read("chat-0002")
    assert [type(e).__name__ for e in pinged if is_sync(e)] == ["InboundFrameEvent"]


async def test_a_chat_with_an_open_socket_or_an_unused_chat_is_kept(tmp_path: Path):
    data = tmp_path / "data"
    settings = Settings(data_dir=data)
    stores = build_stores(data)
    tracer = recording_tracer(stores, settings)
    async with recorded_services(settings, OfflineTutor(), stores, tracer) as services:
        lesson = await services.chats.create_record()
        unused = await services.chats.create_record()
        open_socket = services.hub.connect(lesson.id)
        await receive(services, open_socket, frame("ping"))
        assert await tracer.sweep() == 0
        # Its numbering is kept: a second socket is another unit.
        second = services.hub.connect(lesson.id)
        await receive(services, second, frame("ping"))
        await tracer.flush(lesson.id)
        units = [e.scope for e in await stores.traces.read(lesson.id) if is_sync(e)]
        assert units == ["learner:0", "learner:1"]
        # An unused chat's creation waits for its trace to begin (it is not written).
        assert await stores.traces.read(unused.id) == []
        services.hub.disconnect(open_socket)
        services.hub.disconnect(second)
        assert await tracer.sweep() == 1
        assert await stores.traces.read(unused.id) == []
