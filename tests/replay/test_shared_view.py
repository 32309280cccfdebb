"""A graph read through the one shared `LedgerView` replays in recorded order (issue 7;
seed 1046 of the soak loop).

The view refreshes under its own lock, and the graph read inside is a sync point. When an
extraction run was slow (its auditor still working) while the next turn ended, the turn's
`folded_at` read was recorded before the run's merge read. A replay's extraction is not
slow: it reached the merge refresh first, took the view's lock and waited there for the
turn's read's turn — and the turn waited for the lock. Both stalled; the first divergence
was the turn's graph read "recorded but not replayed". A replayed refresh now waits for
its read's recorded turn before it takes the lock."""

from __future__ import annotations

from pathlib import Path

import anyio

from backend.agent.extraction.offline import OfflineAuditor, OfflineExtractor
from backend.agent.offline.tutor import OfflineTutor
from backend.core.pending import pending_question
from backend.replay.runner import run_replay
from backend.server.dispatch import receive
from backend.server.hub import Connection
from backend.server.recording import recording_tracer
from backend.server.services import Services, open_services
from backend.server.settings import Settings
from backend.server.stores import build_stores
from shared_contracts.trace import ExtractionEvent, MarkEvent
from shared_contracts.trace_blobs import expand_blobs
from tests.fakes import FixedClock, SequentialIds
from tests.golden.record import learner_frame, settle
from tests.replay.abort_session import frame


class HeldAuditor(OfflineAuditor):
    """The offline auditor, held (recording only) until `release` is set: the run is slow
    between its first graph read and its merge."""

    def __init__(self) -> None:
        self.waiting = anyio.Event()
        self.release = anyio.Event()

    async def audit(self, job):
        self.waiting.set()
        await self.release.wait()
        return await super().audit(job)


async def _turn_done(services: Services, chat_id: str) -> None:
    """Until no turn runs and its trailing reads are done (an extraction may be in flight)."""
    quiet = 0
    while quiet < 3:
        quiet = 0 if services.turns.is_running(chat_id) else quiet + 1
        await anyio.sleep(0.01)


async def _answer_or_say(services: Services, stores, connection: Connection, chat_id: str) -> None:
    record = await stores.chats.get(chat_id)  # the raw store: the test's look is no sync point
    if pending_question(record) is not None:
        await receive(services, connection, learner_frame(record, "right"))
    else:
        await receive(services, connection, frame("user_message", text="what next?"))


async def record_turn_read_before_merge(data_dir: Path) -> str:
    """A chat whose extraction run (after an answer) is held before its merge while the
    learner's next turn runs to its end and reads the graph."""
    auditor = HeldAuditor()
    settings = Settings(data_dir=data_dir, every_n_quiz_answers=1)
    stores = build_stores(data_dir)
    tracer = recording_tracer(stores, settings)
    async with open_services(
        settings,
        model=OfflineTutor(),
        clock=FixedClock(),
        ids=SequentialIds(),
        stores=stores,
        tracer=tracer,
        extraction_stages=(OfflineExtractor(), auditor),
    ) as services:
        record = await services.chats.create_record()
        connection = Connection(record.id)
        await receive(services, connection, frame("user_message", text="teach me fractions"))
        await settle(services, record.id)
        await _answer_or_say(services, stores, connection, record.id)
        await auditor.waiting.wait()  # the run is between its first read and its merge
        await _turn_done(services, record.id)
        await _answer_or_say(services, stores, connection, record.id)
        await _turn_done(services, record.id)  # that turn has read the graph
        auditor.release.set()
        await settle(services, record.id)
        await tracer.flush(record.id)
    return record.id


async def test_a_turn_graph_read_recorded_before_an_extraction_merge_replays(tmp_path: Path):
    data = tmp_path / "data"
    chat = await record_turn_read_before_merge(data)
    stores = build_stores(data)
    recorded = expand_blobs(await stores.traces.read(chat))
    reads = [e for e in recorded if isinstance(e, MarkEvent) and e.mark == "graph_read"]
    run = next(e for e in recorded if isinstance(e, ExtractionEvent)).scope
    # The interleaving happened: the run's first read (as `extraction`, before it drew its
    # id), the third turn's graph read, then the run's merge read.
    first = next(e.seq for e in reads if e.scope == "extraction")
    turn3 = next(e.seq for e in reads if e.scope == "turn:3")
    merge = next(e.seq for e in reads if e.scope == run)
    assert first < turn3 < merge, (first, turn3, merge)
    with anyio.fail_after(10):
        result = await run_replay(stores, chat, tmp_path / "replay", stall_s=2.0)
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    assert result.checkpoints == 3
    replayed = [e for e in result.events if isinstance(e, MarkEvent) and e.mark == "graph_read"]
    assert [e.scope for e in replayed] == [e.scope for e in reads]
