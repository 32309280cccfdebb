"""Tracing basics: canonical hashes, the unit a task works for (`Scope`), the replay
`Player` protocol and the graph hasher."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import logging
import re
import threading
import weakref
from collections import OrderedDict
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import anyio
import msgspec

from backend.core.errors import ModelError
from backend.core.ports import GraphStore, LedgerCursor
from shared_contracts.model_io import (
    ModelRequest,
)
from shared_contracts.trace import (
    AnyTraceEvent,
    CheckpointEvent,
    ExtractionEvent,
    InboundFrameEvent,
    JobTraceEvent,
    MarkEvent,
    ModelCallEvent,
)

log = logging.getLogger("harness.trace")
CANONICAL = msgspec.json.Encoder(order="sorted")
LEDGERS = ("propositions", "edges", "events", "mappings", "sessions", "audit")
SYNC_TYPES = (
    MarkEvent,
    JobTraceEvent,
    ExtractionEvent,
    CheckpointEvent,
    InboundFrameEvent,
)
"""Events replay uses to order concurrent units (every other event is ordered by its unit)."""
MAX_INTERNED_CHATS = 128
"""Chats whose trace-interning state stays in memory between flushes."""


def is_sync(event: AnyTraceEvent) -> bool:
    """Whether `event` is a sync point (recorded through `Tracer.sync`)."""
    if isinstance(event, MarkEvent):
        return event.mark != "chat_created"
    return isinstance(event, SYNC_TYPES)


def digest(value: object) -> str:
    """sha256 (32 hex) of the canonical (sorted-keys) msgspec JSON of `value`."""
    return hashlib.sha256(CANONICAL.encode(value)).hexdigest()[:32]


def request_hash(request: ModelRequest) -> str:
    return digest(request)


def was_cancelled(call: ModelCallEvent) -> bool:
    """Whether a recorded call was cancelled mid-stream (`cancelled`, or in a trace from
    before that field: neither a response nor an error)."""
    return call.cancelled or (call.response is None and not call.error)


def is_abort(frame: str) -> bool:
    """Whether a recorded learner frame is an abort."""
    try:
        data = msgspec.json.decode(frame)
    except msgspec.DecodeError:
        return False
    return isinstance(data, dict) and data.get("type") == "abort"


END_SESSION = '{"type":"end_session"}'
"""The recorded form of the session-end request (`POST /api/chats/{id}/extract`): an HTTP
request, not a socket frame, recorded as the learner's action of its own unit `end:<n>`."""


def is_session_end(unit: str) -> bool:
    """Whether `unit` is a session-end request's (`end:<n>`; not a helper task of one)."""
    return unit.startswith("end:") and "~" not in unit


def contained(hook):
    """A recording hook never breaks the lesson: a failure is logged, never raised."""

    @functools.wraps(hook)
    async def run(self, *args, **kwargs):
        try:
            return await hook(self, *args, **kwargs)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:
            log.warning("[trace] %s failed: %s", hook.__name__, exc)

    return run


class ReplayDivergence(ModelError):
    """A replayed model call the recording cannot answer (ends the turn like a model error)."""


@dataclass
class Scope:
    """One unit of work in one chat; `task` is the id of the task that owns it.

    `owner` is a weak reference to that task: a task id is the task's address, and once a
    task is freed a new task (a job) may get the same id and would be taken for the old
    unit — a rare, real misattribution that made replays diverge. A scope whose task is
    gone is nobody's (see `owns`). Weak, because the task's context holds the scope: a
    strong one made every unit's task, context and scope a cycle only a full collection
    freed (≈ 60 ms every few bursts of 50 turns, one burst in seven in B5).
    """

    chat_id: str
    key: str
    task: int
    owner: weakref.ref | None = dataclasses.field(default=None, repr=False, compare=False)
    syncs: int = dataclasses.field(default=0, repr=False, compare=False)
    """Sync points a recording's turn unit has passed (kept here, not in a table, so it
    goes with the turn; a replay counts them per key)."""

    @classmethod
    def here(cls, chat_id: str, key: str) -> Scope:
        """The unit `key` of `chat_id`, owned by the running task."""
        return cls(chat_id, key, _task()[0], _weak(_current_task()))

    def owns(self, task_id: int) -> bool:
        """Whether the task with id `task_id` is this scope's own (not a later task that
        was given the id of a task since freed)."""
        if self.task != task_id:
            return False
        return self.owner is None or self.owner() is not None


SCOPE_VAR: ContextVar[Scope | None] = ContextVar("harness_trace_scope", default=None)


def is_turn_unit(key: str) -> bool:
    """Whether `key` is a turn's own unit (`turn:3`; not a helper task `turn:3~name`)."""
    return key.startswith("turn:") and "~" not in key


@functools.lru_cache(maxsize=1024)
def turn_of(key: str) -> int:
    """The turn number of a unit key (`turn:3`, `turn:3~task` → 3), else 0."""
    match = re.match(r"turn:(\d+)", key)
    return int(match.group(1)) if match else 0


_CURRENT_TASKS: dict | None = getattr(asyncio.tasks, "_current_tasks", None)
_THREAD = threading.local()


def running_task() -> asyncio.Task | None:
    """The running asyncio task (None outside one). The running loop is remembered per
    thread: on 3.11 `asyncio.current_task()` asks `get_running_loop()`, a `getpid` syscall,
    and the tracer asks once per streamed frame. A remembered loop that is not running a
    task step (stopped, or another loop now runs here) finds nothing and is looked up
    again."""
    tasks = _CURRENT_TASKS
    if tasks is None:  # an asyncio without the table (newer Pythons: current_task is C)
        return asyncio.current_task()
    loop = getattr(_THREAD, "loop", None)
    if loop is not None:
        task = tasks.get(loop)
        if task is not None:
            return task
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    _THREAD.loop = loop
    return tasks.get(loop)


def _task_id() -> int:
    """The running anyio task's id; on asyncio read straight off the task (anyio's id is
    `id(task)` there), since building a `TaskInfo` per streamed frame is a measurable cost."""
    try:
        task = running_task()
    except RuntimeError:  # no asyncio loop running (trio)
        task = None
    return id(task) if task is not None else anyio.get_current_task().id


def _current_task() -> object:
    """The running task object (held by a Scope so its id cannot be reused meanwhile)."""
    try:
        return running_task()
    except RuntimeError:
        return None


def _weak(task: object) -> weakref.ref | None:
    """A weak reference to `task` (None for none, or a task that takes none)."""
    try:
        return weakref.ref(task) if task is not None else None
    except TypeError:
        return None


def _task() -> tuple[int, str]:
    info = anyio.get_current_task()
    return info.id, info.name or ""


def current_scope() -> Scope | None:
    """The unit the running task works for (a job task is known by its name)."""
    scope = SCOPE_VAR.get()
    if scope is None:
        return None
    if scope.owns(_task_id()):
        return scope
    task_id, name = _task()
    key = name if name.startswith("job:") else f"{scope.key}~{name}"
    child = Scope(scope.chat_id, key, task_id, _weak(_current_task()))
    SCOPE_VAR.set(child)
    return child


class Player(Protocol):
    """What a replay supplies: recorded values by structural key, and the sync gate."""

    def live(self, key: str) -> bool: ...
    def clock(self, key: str, n: int) -> datetime | None: ...
    def id(self, key: str, n: int, prefix: str) -> str | None: ...
    def call(self, key: str, request: ModelRequest) -> ModelCallEvent: ...
    async def gate(self, key: str, n: int) -> None: ...
    async def cut(self, key: str) -> None: ...
    async def landing(self, key: str, n: int) -> None: ...
    async def stop(self, key: str, n: int = -1, call: str = "", point: str = "") -> None: ...
    def passed(self, key: str, n: int) -> None: ...


class GraphHasher:
    """A running hash and line counts of the graph ledgers (reads only what was appended).

    Once `watch`ing (every append to the store goes through a wrapper that calls
    `changed`), a state with nothing appended since the last one is answered without a
    read: two thread hops a turn fewer."""

    def __init__(self, graph: GraphStore) -> None:
        self._graph = graph
        self._cursor = LedgerCursor()
        self._hashes = {name: hashlib.sha256() for name in LEDGERS}
        self._counts = dict.fromkeys(LEDGERS, 0)
        self._lock = anyio.Lock(fast_acquire=True)
        self._watched = False
        self._dirty = True
        self._last: tuple[dict[str, int], str] | None = None

    def watch(self, store: object) -> None:
        """`store`'s appends now all report `changed` (only if it is the hashed store)."""
        self._watched = self._watched or store is self._graph

    def changed(self) -> None:
        self._dirty = True

    async def state(self) -> tuple[dict[str, int], str]:
        async with self._lock:
            if self._watched and not self._dirty and self._last is not None:
                return dict(self._last[0]), self._last[1]
            self._dirty = False  # before the read: an append landing during it re-dirties
            batch, self._cursor = await self._graph.read_since(self._cursor)
            for name in LEDGERS:
                for line in getattr(batch, name):
                    self._hashes[name].update(CANONICAL.encode(line) + b"\n")
                    self._counts[name] += 1
            whole = hashlib.sha256()
            for name in LEDGERS:
                whole.update(self._hashes[name].digest())
            self._last = (dict(self._counts), whole.hexdigest()[:32])
            return dict(self._counts), self._last[1]


class TranscriptHasher:
    """`digest(messages)` of each chat's transcript, resumed where the last one left off:
    records change copy-on-write, so the messages a transcript shares with the one hashed
    before are the very same objects, and only what follows them is encoded and hashed.
    The value is exactly `digest(messages)` (the canonical JSON array, hashed in pieces).

    It keeps each chat's last hashed messages (a tuple of references: 8 bytes a message,
    the objects being the ones the open chat's record holds anyway), so the identity
    comparison is sound: no compared object can have been freed and its id reused. The
    tracer `forget`s a chat once it is idle (`Tracer.sweep`); at most `CHATS` are kept."""

    KEEP = 4
    """Prefix states kept per chat: a turn appends messages and may replace its last few."""
    CHATS = 512

    def __init__(self) -> None:
        # chat id -> (its last hashed messages, {prefix length: hash state})
        self._chats: OrderedDict[str, tuple[tuple, dict[int, object]]] = OrderedDict()

    def __contains__(self, chat_id: object) -> bool:
        """Whether the next digest of this chat can resume (it was hashed recently)."""
        return chat_id in self._chats

    def chat_ids(self) -> list[str]:
        return list(self._chats)

    def forget(self, chat_id: str) -> None:
        """Let go of a chat's messages (it is idle): its next digest is hashed whole."""
        self._chats.pop(chat_id, None)

    def digest(self, chat_id: str, messages: list) -> str:
        old = self._chats.pop(chat_id, None)
        start, state, kept = 0, None, {}
        if old is not None:
            before, states = old
            same = 0
            for earlier, message in zip(before, messages, strict=False):
                if earlier is not message:
                    break
                same += 1
            kept = {k: v for k, v in states.items() if k <= same}
            if kept:
                start = max(kept)
                state = kept[start].copy()  # type: ignore[attr-defined]
        if state is None:
            start, state, kept = 0, hashlib.sha256(b"["), {}
        total = len(messages)
        keep_from = total - self.KEEP
        states = {k: v for k, v in kept.items() if k >= keep_from}
        if start >= keep_from:
            states[start] = state.copy()
        encode = CANONICAL.encode
        for i in range(start, total):
            if i:
                state.update(b",")
            state.update(encode(messages[i]))
            if i + 1 >= keep_from:
                states[i + 1] = state.copy()
        self._chats[chat_id] = (tuple(messages), states)
        if len(self._chats) > self.CHATS:
            self._chats.popitem(last=False)
        state.update(b"]")
        return state.hexdigest()[:32]


def to_json(value: object) -> str:
    """Compact msgspec JSON text of `value`."""
    return msgspec.json.encode(value).decode()
