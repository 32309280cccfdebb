"""Strict replay, fork and diff of recorded sessions (`harness replay`).

A replay runs the real server code (`open_services`: turns, job runner, extraction)
on a temp data dir against a chat's trace:
- a cassette answers every model call by its structural key; a request whose hash differs
  from the recording is a divergence (the turn ends as on a model error);
- clock and id values come from the trace, by unit and ordinal;
- the recorded learner frames go through the WebSocket dispatcher in order, each socket's
  (unit `learner:<n>`; older traces: one `learner` unit) on its own; a session-end request
  (`POST .../extract`, unit `end:<n>`) is re-issued through `Services.end_session`;
- jobs and extraction runs are re-run (offline agents are deterministic; model-backed ones
  answer from the cassette; a job call its job's timeout cut times out at that cut, under
  the recorded `job_timeout_s`), and every sync point — turn and step starts, each unit's
  chat-record and graph reads and writes, job and extraction events, checkpoints, learner
  frames — waits until everything recorded before it in other units has happened: a job's
  result is written (and so delivered) exactly where it was in the recording. A unit
  reaching a sync point its recording never reached (the session was stopped there) is
  held: the replay compares what happened up to where the recording ends. A recording
  that ends inside a turn (the server was shut down mid-turn) replays up to there: the
  call it was streaming gives what the learner saw of it, and that turn is held where the
  recording stops (`ReplayResult.ends_inside_turn`; the CLI says so and exits 0).
- A recording that ends with a shutdown, written by a recorder that keeps every unit's
  cancellation path (`replay_shutdown`), replays through it: each unit the shutdown cut
  (a turn, a job queued, starting or streaming, an extraction run) is held where it was
  cut, then the replay shuts its own services down and those paths are compared too
  (`ReplayResult.shutdown_cut`). Older traces, or one cut short, replay up to their end.
The replay's own trace is then compared, unit by unit, with the recording: the first
difference (in recorded order) is reported with both versions and a unified diff. Both
traces are compared expanded (`read_expanded`): interned text is restored, so a trace
written before blobs existed replays against a new one.

A fork replays strictly up to turn N, then runs turn N live on another model and stores the
result as a new chat (`forked_from`) in the target data dir; the fork runs on a temp graph,
so it never writes the learner's real graph.

Modules: this one drives a replay (and forks, and the CLI); `replay_cassette` holds the
cassette (values, sync gate, runtime divergences), `replay_shutdown` reads a recorded
shutdown, `replay_diff` compares and diffs traces.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import anyio

from backend.core.errors import NotFound
from backend.core.ports import ChatModel, LedgerBatch, LedgerCursor
from backend.server.dispatch import receive
from backend.server.hub import Connection
from backend.server.replay_cassette import Cassette, Divergence, NoLiveModel
from backend.server.replay_diff import (
    ReplayResult,
    TurnDigest,
    compare,
    diff_sessions,
    digest_turns,
)
from backend.server.runtime import RandomIds, SystemClock
from backend.server.services import open_services
from backend.server.settings import Settings
from backend.server.stores import Stores, build_stores
from backend.server.tracing import (
    LEDGERS,
    Tracer,
    read_expanded,
)
from backend.server.tracing_core import is_session_end
from shared_contracts.chat import UNTITLED, ChatRecord, ForkOrigin
from shared_contracts.trace import (
    AnyTraceEvent,
    ClockEvent,
    InboundFrameEvent,
    MarkEvent,
)

__all__ = [
    "Cassette",
    "Divergence",
    "NoLiveModel",
    "ReplayResult",
    "TurnDigest",
    "cli",
    "compare",
    "diff_sessions",
    "digest_turns",
    "fork_session",
    "live_model",
    "run_replay",
]

STALL_S = 5.0
TICK_S = 0.01


# -- running a replay -----------------------------------------------------------------


def _first_mark(events: Sequence[AnyTraceEvent], mark: str) -> MarkEvent | None:
    return next((e for e in events if isinstance(e, MarkEvent) and e.mark == mark), None)


async def _seed_graph(source: Stores, target: Stores, counts: dict[str, int]) -> None:
    """The graph as it was when the session began: a prefix of each source ledger."""
    if not any(counts.values()):
        return
    batch, _ = await source.graph.read_since(LedgerCursor())
    base = LedgerBatch(**{name: getattr(batch, name)[: counts.get(name, 0)] for name in LEDGERS})
    await target.graph.append(base)


def _settings(work_dir: Path, config: dict[str, str]) -> Settings:
    def role(name: str) -> str | None:
        value = config.get(name, "offline")
        return None if value == "offline" else value

    return Settings(
        data_dir=work_dir,
        model=role("teacher"),
        extractor_model=role("extractor"),
        auditor_model=role("auditor"),
        subagent_model=role("subagent"),
        every_n_quiz_answers=int(config.get("every_n_quiz_answers", "3")),
        max_steps=int(config.get("max_steps", "12")),
        # Jobs run (queue, time out) under the recorded limits; older traces: the defaults.
        job_timeout_s=float(config.get("job_timeout_s", "120")),
        max_jobs_per_chat=int(config.get("max_jobs_per_chat", "2")),
        max_jobs_global=int(config.get("max_jobs_global", "4")),
    )


def live_model(spec: str):
    """A teacher for the live part of a fork: `offline` or a litellm model string."""
    if spec == "offline":
        from backend.agent.offline.tutor import OfflineTutor

        return OfflineTutor()
    from backend.agent.litellm_model import LitellmChatModel

    return LitellmChatModel(spec)


async def run_replay(
    source: Stores,
    chat_id: str,
    work_dir: Path,
    *,
    template: str | None = None,
    fork_turn: int | None = None,
    fork_model: str = "offline",
    teacher: ChatModel | None = None,
    stall_s: float = STALL_S,
) -> ReplayResult:
    """Replay `chat_id` from `source` on `work_dir`; see the module docstring."""
    recorded = read_expanded(await source.traces.read(chat_id), chat_id)
    started = _first_mark(recorded, "turn_started")
    created = _first_mark(recorded, "chat_created")
    if started is None:
        raise NotFound(f"chat {chat_id!r} has no recorded turn to replay")
    cassette = Cassette(recorded, fork_turn)
    stores = build_stores(work_dir)
    await _seed_graph(source, stores, (created or started).graph_counts)
    settings = _settings(work_dir, started.config)
    tracer = Tracer(
        stores.traces, stores.chats, stores.graph, player=cassette, config=started.config
    )
    live = fork_turn is not None
    if teacher is None:
        teacher = live_model(fork_model) if live else NoLiveModel()  # type: ignore[assignment]
    new_id = RandomIds().new("chat") if live else chat_id
    at = created.at if created and created.at else _first_clock(recorded)
    record = ChatRecord(
        id=new_id,
        title=created.title if created else UNTITLED,
        created_at=at,
        updated_at=at,
        model=fork_model if live else started.config.get("teacher", "offline"),
        forked_from=ForkOrigin(chat_id=chat_id, from_turn=fork_turn) if live else None,
    )
    inbound = [
        e for e in recorded if isinstance(e, InboundFrameEvent) and e.seq < cassette.fork_seq
    ]
    async with anyio.create_task_group() as watchdog:
        with anyio.CancelScope() as server:
            async with open_services(
                settings,
                model=teacher,
                clock=SystemClock(),
                ids=RandomIds(),
                stores=stores,
                tracer=tracer,
                template=template,
            ) as services:
                await stores.chats.create(record)
                await tracer.chat_created(record)
                expected = 0 if live else len(recorded)
                with anyio.move_on_after(_budget(recorded, stall_s)):
                    await _feed(services, cassette, new_id, inbound, stall_s)
                    await _settle(services, tracer, cassette, new_id, expected, stall_s)
                if cassette.shutdown is None:
                    # What the replay did up to here is compared; held units are released.
                    await tracer.flush(new_id)
                    replayed = read_expanded(await stores.traces.read(new_id), new_id)
                    runtime = list(cassette.divergences)
                    cassette.close()
                else:
                    # The recording ends with a shutdown: so does the replay, here. Each held
                    # unit takes its recorded cancellation path (its sync points gated as
                    # recorded); all of it is compared. A path that stalls is released.
                    watchdog.start_soon(_release_when_stalled, cassette, stall_s)
                    server.cancel()
        if cassette.shutdown is not None:
            replayed = read_expanded(await stores.traces.read(new_id), new_id)
            runtime = list(cassette.divergences)
            cassette.close()
        watchdog.cancel_scope.cancel()
    result = ReplayResult(chat_id=chat_id, events=replayed)
    if live:
        await tracer.flush(new_id)  # a fork keeps everything its live part did
        result.events = read_expanded(await stores.traces.read(new_id), new_id)
        result.fork_id = new_id
        return result
    result.ends_inside_turn = cassette.ends_inside_turn
    if cassette.shutdown is not None:
        result.shutdown_cut = sorted(cassette.shutdown.units)
    compare(recorded, replayed, runtime, result, unrecorded=cassette.unrecorded)
    return result


async def _feed(services, cassette: Cassette, chat_id: str, inbound, stall_s: float) -> None:
    """The recorded learner frames, each socket's (unit's) on its own, as on their sockets:
    a frame of one socket may be recorded between another's frame and what that frame
    then reads (an answer, its question), so no socket waits for another's frame to be
    handled. Older traces have one `learner` unit: their frames go one after another."""
    units: dict[str, list[InboundFrameEvent]] = {}
    for event in inbound:
        units.setdefault(event.scope, []).append(event)
    async with anyio.create_task_group() as tg:
        for unit, frames in units.items():
            tg.start_soon(
                _feed_unit, services, cassette, Connection(chat_id), unit, frames, stall_s
            )


async def _feed_unit(
    services, cassette: Cassette, connection: Connection, unit: str, frames, stall_s: float
) -> None:
    """One unit's recorded frames, each once its recorded turn comes."""
    # The unit's sync points are its frames and what they read: a frame waits for its
    # own ordinal among them.
    ordinal = {seq: n for n, seq in enumerate(cassette.sync_seqs.get(unit, []))}
    for event in frames:
        gate = cassette.gate(unit, ordinal[event.seq])
        if not await _wait(cassette, gate, stall_s):
            return
        cut = cassette.aborts.get(event.seq)
        # An abort lands where it landed when recorded: once the call it cut has yielded
        # what it had yielded then.
        if cut is not None and not await _wait(cassette, cassette.reached(cut), stall_s):
            return
        if is_session_end(unit):
            # The session-end flush, an HTTP request: re-issued as the route issues it.
            await services.end_session(connection.chat_id, unit)
        else:
            await receive(services, connection, event.frame, unit)


async def _release_when_stalled(cassette: Cassette, stall_s: float) -> None:
    """After the replay's shutdown: if its units have not all ended within `stall_s` (one
    waits at a sync point the recording's order never gives it), release them."""
    with anyio.move_on_after(stall_s):
        await cassette.failed.wait()
        await anyio.sleep(0.05)  # let the diverged unit finish and record its end
    cassette.close()


def _first_clock(events: Sequence[AnyTraceEvent]) -> datetime:
    return next(e.value for e in events if isinstance(e, ClockEvent))


def _budget(events: Sequence[AnyTraceEvent], stall_s: float) -> float:
    return stall_s * 4 + 0.05 * len(events)


async def _wait(cassette: Cassette, waiter, stall_s: float) -> bool:
    """Await `waiter` unless the replay diverged or stalled first; True if it completed."""
    done = False

    async def run() -> None:
        nonlocal done
        await waiter
        done = True
        tg.cancel_scope.cancel()

    async def watch() -> None:
        await cassette.failed.wait()
        tg.cancel_scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        tg.start_soon(watch)
        await anyio.sleep(stall_s)
        tg.cancel_scope.cancel()
    return done


async def _settle(
    services, tracer: Tracer, cassette: Cassette, chat_id: str, expected: int, stall_s: float
) -> None:
    """Until every recorded sync point has passed, the replay has emitted `expected` events
    and then nothing new for a few ticks (a fork: until nothing runs); or until it stalls
    (nothing emitted for `stall_s`) or diverges. Units held at a sync point their recording
    never reached count as finished."""
    quiet = 0
    idle_for = 0.0
    last = -1
    while quiet < 3 and idle_for < stall_s:
        if cassette.failed.is_set():
            await anyio.sleep(0.05)  # let the diverged turn finish and record its end
            return
        count = tracer.emitted(chat_id)
        if cassette.shutdown is not None:
            # It shuts down as the recording did: once every unit is where it was cut.
            done = cassette.ready()
        elif expected:
            done = count >= expected
        else:
            done = services.idle(chat_id)
        if cassette.shutdown is None:
            # A recording that ends inside a turn: that turn is held where it ends.
            done = (done or cassette.at_end()) and not cassette.remaining()
        if count != last:
            last, quiet, idle_for = count, 0, 0.0
        elif done:
            quiet += 1
        else:
            idle_for += TICK_S
        with anyio.move_on_after(TICK_S):
            await cassette.changed.wait()


# -- forks ----------------------------------------------------------------------------


async def fork_session(
    target: Stores,
    chat_id: str,
    from_turn: int,
    model: str,
    work_dir: Path,
    *,
    teacher: ChatModel | None = None,
) -> ReplayResult:
    """Replay `chat_id` strictly before `from_turn`, run that turn live on `model`, and store
    the result in `target` as a new chat with `forked_from`; its trace and jobs come along."""
    result = await run_replay(
        target, chat_id, work_dir, fork_turn=from_turn, fork_model=model, teacher=teacher
    )
    temp = build_stores(work_dir)
    record = await temp.chats.get(result.fork_id)
    await target.chats.create(record)
    await target.traces.append(result.fork_id, await temp.traces.read(result.fork_id))
    for job in await temp.jobs.list_all():
        if job.chat_id != result.fork_id:
            continue
        try:
            await target.jobs.get(job.id)
        except NotFound:
            await target.jobs.save(job)
    return result


# -- the CLI --------------------------------------------------------------------------


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

        async def both():
            a, b = await source.traces.read(ids[1]), await source.traces.read(ids[2])
            return read_expanded(a, ids[1]), read_expanded(b, ids[2])

        a, b = anyio.run(both)
        lines = diff_sessions(a, b, (ids[1], ids[2]))
        print("\n".join(lines) if lines else f"{ids[1]} and {ids[2]}: no per-turn differences")
        return 1 if lines else 0
    if len(ids) != 1:
        print("usage: harness replay CHAT_ID [--from-turn N --model M]")
        return 2
    chat_id = ids[0]
    body = template.read_text("utf-8") if template else None
    with tempfile.TemporaryDirectory(prefix="harness-replay-") as tmp:
        if from_turn is not None:
            result = anyio.run(
                fork_session, source, chat_id, from_turn, model or "offline", Path(tmp)
            )
            print(
                f"forked {chat_id} at turn {from_turn} onto {model or 'offline'}:"
                f" new chat {result.fork_id}"
            )
            return 0
        result = anyio.run(lambda: run_replay(source, chat_id, Path(tmp), template=body))
    if result.ok:
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
    print(result.divergence.render())  # type: ignore[union-attr]
    return 1
