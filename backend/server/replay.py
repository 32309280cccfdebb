"""Strict replay, fork and diff of recorded sessions (`harness replay`).

A replay runs the real server code (`open_services`: ChatHandler, job runner, extraction)
on a temp data dir against a chat's trace:
- a cassette answers every model call by its structural key; a request whose hash differs
  from the recording is a divergence (the turn ends as on a model error);
- clock and id values come from the trace, by unit and ordinal;
- the recorded learner frames go through the WebSocket dispatcher in order;
- jobs and extraction runs are re-run (offline agents are deterministic; model-backed ones
  answer from the cassette), and every sync point — turn and step starts, each unit's
  chat-record and graph reads and writes, job and extraction events, checkpoints, learner
  frames — waits until everything recorded before it in other units has happened: a job's
  result is written (and so delivered) exactly where it was in the recording. A unit
  reaching a sync point its recording never reached (the session was stopped there) is
  held: the replay compares what happened up to where the recording ends.
The replay's own trace is then compared, unit by unit, with the recording: the first
difference (in recorded order) is reported with both versions and a unified diff. Both
traces are compared expanded (`read_expanded`): interned text is restored, so a trace
written before blobs existed replays against a new one.

A fork replays strictly up to turn N, then runs turn N live on another model and stores the
result as a new chat (`forked_from`) in the target data dir; the fork runs on a temp graph,
so it never writes the learner's real graph.
"""

from __future__ import annotations

import difflib
import json
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import anyio
import msgspec

from backend.core.errors import ModelError, NotFound
from backend.core.ports import ChatModel, LedgerBatch, LedgerCursor
from backend.server.hub import Connection
from backend.server.runtime import RandomIds, SystemClock
from backend.server.services import open_services
from backend.server.settings import Settings
from backend.server.stores import Stores, build_stores
from backend.server.tracing import (
    LEDGERS,
    ReplayDivergence,
    Tracer,
    is_sync,
    read_expanded,
    turn_of,
)
from backend.server.ws import _dispatch
from shared_contracts.chat import ChatRecord, ForkOrigin
from shared_contracts.model_io import ModelRequest
from shared_contracts.trace import (
    AnyTraceEvent,
    CheckpointEvent,
    ClockEvent,
    ExtractionEvent,
    IdEvent,
    InboundFrameEvent,
    MarkEvent,
    ModelCallEvent,
    OutboundFrameEvent,
    PromptEvent,
    ToolRunEvent,
)
from shared_contracts.trace_blobs import expand_blobs

PRETTY = msgspec.json.Encoder(order="sorted")
STALL_S = 5.0
TICK_S = 0.01


@dataclass(frozen=True)
class Divergence:
    """Where a replay first differs: the recorded event (by seq) and both versions."""

    seq: int
    where: str
    recorded: str
    replayed: str
    diff: str

    def render(self) -> str:
        return (
            f"FIRST DIVERGENCE at recorded event #{self.seq}: {self.where}\n"
            f"--- recorded\n{_clip(self.recorded)}\n"
            f"+++ replayed\n{_clip(self.replayed)}\n"
            f"diff:\n{self.diff}"
        )


@dataclass
class ReplayResult:
    chat_id: str
    compared: int = 0
    frames: int = 0
    checkpoints: int = 0
    divergence: Divergence | None = None
    fork_id: str = ""
    events: list[AnyTraceEvent] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.divergence is None


# -- the cassette ---------------------------------------------------------------------


class Cassette:
    """The `tracing.Player` of a recording: values by unit and ordinal, and the sync gate."""

    def __init__(self, events: Sequence[AnyTraceEvent], fork_turn: int | None = None) -> None:
        self.clocks: dict[tuple[str, int], datetime] = {}
        self.ids: dict[tuple[str, int], IdEvent] = {}
        self.calls: dict[str, ModelCallEvent] = {}
        self.sync_seqs: dict[str, list[int]] = defaultdict(list)
        self.first_seq: dict[str, int] = {}
        self.divergences: list[Divergence] = []
        self.failed = anyio.Event()
        self.changed = anyio.Event()
        self.fork_turn = fork_turn
        self.fork_seq = _fork_seq(events, fork_turn)
        counts: dict[tuple[str, str], int] = defaultdict(int)
        pending: list[tuple[int, str]] = []
        for event in events:
            self.first_seq.setdefault(event.scope, event.seq)
            if isinstance(event, ClockEvent):
                self.clocks[(event.scope, counts[(event.scope, "clock")])] = event.value
                counts[(event.scope, "clock")] += 1
            elif isinstance(event, IdEvent):
                self.ids[(event.scope, counts[(event.scope, "id")])] = event
                counts[(event.scope, "id")] += 1
            elif isinstance(event, ModelCallEvent):
                self.calls[event.key] = event
            if is_sync(event) and event.seq < self.fork_seq:
                self.sync_seqs[event.scope].append(event.seq)
                pending.append((event.seq, event.scope))
        self.pending = sorted(pending)
        self._done: set[int] = set()
        self.closed = False

    def live(self, key: str) -> bool:
        if self.fork_turn is None:
            return False
        if key.startswith("turn:"):
            return turn_of(key) >= self.fork_turn
        first = self.first_seq.get(key)
        return first is None or first >= self.fork_seq

    def clock(self, key: str, n: int) -> datetime | None:
        value = self.clocks.get((key, n))
        if value is None:
            self._diverge(self._seq_near(key), f"{key}: clock value #{n}", "(recorded)", "")
        return value

    def id(self, key: str, n: int, prefix: str) -> str | None:
        event = self.ids.get((key, n))
        if event is None or event.prefix != prefix:
            recorded = f"{event.prefix}: {event.value}" if event else "(none)"
            seq = event.seq if event else self._seq_near(key)
            self._diverge(seq, f"{key}: id #{n}", recorded, f"a new {prefix!r} id")
            return None
        return event.value

    def call(self, key: str, request: ModelRequest) -> ModelCallEvent:
        recorded = self.calls.get(key)
        if recorded is None:
            self._diverge(
                self._seq_near(key), f"model call {key}", "(none)", _request_text(request)
            )
            raise ReplayDivergence(f"replay: no recorded model call {key}")
        if recorded.request_hash != _hash(request):
            self._diverge(
                recorded.seq,
                f"model call {key}: the request differs",
                _request_text(recorded.request),
                _request_text(request),
            )
            raise ReplayDivergence(f"replay: model call {key} diverged from the recording")
        return recorded

    async def gate(self, key: str, n: int) -> None:
        """Hold a unit's sync point `n` until every sync point recorded before it in other
        units has passed. A strict replay holds a unit for good at a sync point its
        recording never reached (the session was stopped there: a job cancelled at
        shutdown), until `close`."""
        seqs = self.sync_seqs.get(key, [])
        if n >= len(seqs):
            while self.fork_turn is None and not self.closed:
                await self.changed.wait()
            return
        target = seqs[n]
        while not self._clear(key, target) and not self.closed:
            await self.changed.wait()

    def close(self) -> None:
        """The replay is over: release every held unit (what it does next is not compared)."""
        self.closed = True
        self._notify()

    def passed(self, key: str, n: int) -> None:
        seqs = self.sync_seqs.get(key, [])
        if n < len(seqs):
            self._done.add(seqs[n])
            self._notify()

    def remaining(self) -> list[tuple[int, str]]:
        return [(s, k) for s, k in self.pending if s not in self._done]

    def _clear(self, key: str, target: int) -> bool:
        for seq, scope in self.pending:
            if seq >= target:
                return True
            if scope != key and seq not in self._done:
                return False
        return True

    def _notify(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    def _seq_near(self, key: str) -> int:
        return self.first_seq.get(key.split("/")[0], 0)

    def _diverge(self, seq: int, where: str, recorded: str, replayed: str) -> None:
        self.divergences.append(
            Divergence(seq, where, recorded, replayed, _udiff(recorded, replayed))
        )
        self.failed.set()
        self._notify()


def _hash(request: ModelRequest) -> str:
    from backend.server.tracing import request_hash

    return request_hash(request)


def _fork_seq(events: Sequence[AnyTraceEvent], fork_turn: int | None) -> int:
    if fork_turn is None:
        return 1 << 62
    for event in events:
        if (
            isinstance(event, MarkEvent)
            and event.mark == "turn_started"
            and event.turn >= fork_turn
        ):
            return event.seq
    return 1 << 62


class NoLiveModel:
    """The teacher of a strict replay: every call must come from the cassette."""

    name = "replay"

    def stream(self, request: ModelRequest):
        raise ModelError("a strict replay makes no live model calls")


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
        title=created.title if created else "New session",
        created_at=at,
        updated_at=at,
        model=fork_model if live else started.config.get("teacher", "offline"),
        forked_from=ForkOrigin(chat_id=chat_id, from_turn=fork_turn) if live else None,
    )
    inbound = [
        e for e in recorded if isinstance(e, InboundFrameEvent) and e.seq < cassette.fork_seq
    ]
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
        connection = Connection(new_id)
        with anyio.move_on_after(_budget(recorded, stall_s)):
            # The learner unit's sync points are its frames and what they read: a frame
            # waits for its own ordinal among them.
            ordinal = {seq: n for n, seq in enumerate(cassette.sync_seqs.get("learner", []))}
            for event in inbound:
                gate = cassette.gate("learner", ordinal[event.seq])
                if not await _wait(cassette, gate, stall_s):
                    break
                await _dispatch(services, connection, event.frame)
            await _settle(services, tracer, cassette, new_id, 0 if live else len(recorded), stall_s)
        # What the replay did up to here is compared; held units are released to shut down.
        await tracer.flush(new_id)
        replayed = read_expanded(await stores.traces.read(new_id), new_id)
        runtime = list(cassette.divergences)
        cassette.close()
    result = ReplayResult(chat_id=chat_id, events=replayed)
    if live:
        await tracer.flush(new_id)  # a fork keeps everything its live part did
        result.events = read_expanded(await stores.traces.read(new_id), new_id)
        result.fork_id = new_id
        return result
    compare(recorded, replayed, runtime, result)
    return result


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
        if expected:
            done = count >= expected
        else:
            done = not (
                services.handler.is_running(chat_id)
                or bool(services.jobs and services.jobs.active_ids())
                or services.extraction._flight.in_flight(chat_id)
            )
        done = done and not cassette.remaining()
        if count != last:
            last, quiet, idle_for = count, 0, 0.0
        elif done:
            quiet += 1
        else:
            idle_for += TICK_S
        with anyio.move_on_after(TICK_S):
            await cassette.changed.wait()


# -- comparing ------------------------------------------------------------------------

_SKIP = (ClockEvent, IdEvent)


def _slots(events: Sequence[AnyTraceEvent]) -> dict[tuple[str, str, int], AnyTraceEvent]:
    counts: dict[tuple[str, str], int] = defaultdict(int)
    out: dict[tuple[str, str, int], AnyTraceEvent] = {}
    for event in events:
        if isinstance(event, _SKIP):
            continue
        tag = type(event).__name__
        n = counts[(event.scope, tag)]
        counts[(event.scope, tag)] += 1
        out[(event.scope, tag, n)] = event
    return out


def _plain(event: AnyTraceEvent) -> dict:
    data = msgspec.to_builtins(event)
    data.pop("seq", None)
    if isinstance(event, ModelCallEvent):
        data.pop("chunks", None)  # timings; the content is in the response and the frames
    return data


def compare(
    recorded: Sequence[AnyTraceEvent],
    replayed: Sequence[AnyTraceEvent],
    runtime: Sequence[Divergence],
    result: ReplayResult,
) -> None:
    """Fill `result` with counts and the first divergence (in recorded order)."""
    ours = _slots(replayed)
    theirs = _slots(recorded)
    found: list[Divergence] = list(runtime)
    for slot, event in theirs.items():
        result.compared += 1
        result.frames += isinstance(event, OutboundFrameEvent)
        result.checkpoints += isinstance(event, CheckpointEvent)
        other = ours.get(slot)
        if other is not None and _plain(other) == _plain(event):
            continue
        found.append(_divergence(slot, event, other))
    last_seq: dict[str, int] = {}
    for event in recorded:
        last_seq[event.scope] = event.seq
    for slot, event in ours.items():
        if slot not in theirs:
            seq = last_seq.get(slot[0], recorded[-1].seq if recorded else 0)
            found.append(_divergence(slot, None, event, seq=seq))
    if found:
        result.divergence = min(found, key=lambda d: d.seq)


def _divergence(slot, recorded: AnyTraceEvent | None, replayed: AnyTraceEvent | None, seq=None):
    scope, tag, n = slot
    where = f"{tag} #{n} of {scope}"
    left, right = _text(recorded), _text(replayed)
    if isinstance(recorded, PromptEvent) and isinstance(replayed, PromptEvent):
        diff = _udiff(recorded.system_prompt, replayed.system_prompt, "system prompt")
        if recorded.template_hash != replayed.template_hash:
            old, new = recorded.template_hash, replayed.template_hash
            where += f" (template {recorded.template_id}: {old} → {new})"
    else:
        diff = _udiff(left, right)
    return Divergence(recorded.seq if recorded else seq, where, left, right, diff)


def _text(event: AnyTraceEvent | None) -> str:
    if event is None:
        return "(missing)"
    data = _plain(event)
    if isinstance(event, OutboundFrameEvent | InboundFrameEvent):
        data["frame"] = (
            json.loads(event.frame) if event.frame.strip().startswith("{") else event.frame
        )
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False, default=str)


def _request_text(request: ModelRequest) -> str:
    lines = [f"role: {request.role}  tools: {', '.join(t.name for t in request.tools)}"]
    for message in request.messages:
        lines.append(
            f"[{message.role}{' ' + message.tool_call_id if message.tool_call_id else ''}]"
        )
        lines.extend(message.content.splitlines() or [""])
        for call in message.tool_calls:
            lines.append(f"  -> {call.name}({call.arguments}) {call.id}")
    if request.response_schema is not None:
        lines.append("response_schema: " + PRETTY.encode(request.response_schema).decode())
    return "\n".join(lines)


def _udiff(a: str, b: str, label: str = "event") -> str:
    lines = difflib.unified_diff(
        a.splitlines(), b.splitlines(), f"recorded {label}", f"replayed {label}", lineterm="", n=2
    )
    return "\n".join(lines) or "(no line differences)"


def _clip(text: str, limit: int = 3000) -> str:
    return (
        text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"
    )


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


# -- diff -----------------------------------------------------------------------------


@dataclass
class TurnDigest:
    """What a turn did, for `diff`: prompt, tool calls, text, audit drops, graph."""

    prompt: str = ""
    tools: list[str] = field(default_factory=list)
    text: str = ""
    audits: list[str] = field(default_factory=list)
    graph: list[str] = field(default_factory=list)


def digest_turns(events: Sequence[AnyTraceEvent]) -> dict[int, TurnDigest]:
    """Per-turn digests; extraction runs count toward the last turn begun before them.
    `events` may be stored (interned) or expanded."""
    turns: dict[int, TurnDigest] = defaultdict(TurnDigest)
    current = 0
    for event in expand_blobs(events):
        turn = turn_of(event.scope) or current
        if isinstance(event, MarkEvent) and event.mark == "turn_started":
            current = turn = event.turn
        digest = turns[turn]
        if isinstance(event, PromptEvent):
            digest.prompt = event.system_prompt
        elif isinstance(event, ToolRunEvent):
            outcome = f" ! {event.error}" if event.error else ""
            digest.tools.append(f"{event.tool_name}({event.raw_args}){outcome}")
        elif isinstance(event, OutboundFrameEvent):
            frame = json.loads(event.frame)
            if frame.get("type") == "text_delta":
                digest.text += frame.get("delta", "")
        elif isinstance(event, ExtractionEvent):
            digest.audits.extend(f"gate drop {d}" for d in event.gate_drops)
            digest.audits.extend(f"auditor drop {d}" for d in event.auditor_drops)
            digest.graph.append(f"merge {event.merge_diff} → graph {event.graph_hash_after}")
        elif isinstance(event, CheckpointEvent):
            digest.graph.append(f"checkpoint graph {event.graph_hash} plan {event.plan_hash}")
    return dict(turns)


def diff_sessions(
    a: Sequence[AnyTraceEvent], b: Sequence[AnyTraceEvent], names=("A", "B")
) -> list[str]:
    """Readable per-turn differences between two traces (empty when the turns agree)."""
    left, right = digest_turns(a), digest_turns(b)
    out: list[str] = []
    for turn in sorted(set(left) | set(right)):
        x, y = left.get(turn, TurnDigest()), right.get(turn, TurnDigest())
        parts = []
        for label, p, q in (
            ("prompt", x.prompt, y.prompt),
            ("tool calls", "\n".join(x.tools), "\n".join(y.tools)),
            ("text", x.text, y.text),
            ("audit decisions", "\n".join(x.audits), "\n".join(y.audits)),
            ("graph", "\n".join(x.graph), "\n".join(y.graph)),
        ):
            if p != q:
                lines = difflib.unified_diff(
                    p.splitlines(),
                    q.splitlines(),
                    f"{names[0]} {label}",
                    f"{names[1]} {label}",
                    lineterm="",
                    n=1,
                )
                parts.append(f"  {label}:\n" + "\n".join("    " + line for line in lines))
        if parts:
            out.append(f"turn {turn}:")
            out.extend(parts)
    return out


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
        return 0
    print(result.divergence.render())  # type: ignore[union-attr]
    return 1
