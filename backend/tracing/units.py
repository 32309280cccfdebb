"""Units of work and the task that does each: a `Scope` (`turn:3`, `job:<id>`,
`extraction:<run>`, `learner:<n>`, `end:<n>`), held by a context variable.

A unit's helper tasks are units of their own, `<unit>~<task name>`; a job's task is known
by its anyio task name (`job:<id>`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import re
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import anyio
import msgspec

END_SESSION = '{"type":"end_session"}'
"""The recorded form of the session-end request (`POST /api/chats/{id}/extract`): an HTTP
request, not a socket frame, recorded as the learner's action of its own unit `end:<n>`."""


def is_session_end(unit: str) -> bool:
    """Whether `unit` is a session-end request's (`end:<n>`; not a helper task of one)."""
    return unit.startswith("end:") and "~" not in unit


def is_turn_unit(key: str) -> bool:
    """Whether `key` is a turn's own unit (`turn:3`; not a helper task `turn:3~name`)."""
    return key.startswith("turn:") and "~" not in key


@functools.lru_cache(maxsize=1024)
def turn_of(key: str) -> int:
    """The turn number of a unit key (`turn:3`, `turn:3~task` → 3), else 0."""
    match = re.match(r"turn:(\d+)", key)
    return int(match.group(1)) if match else 0


def is_abort(frame: str) -> bool:
    """Whether a recorded learner frame is an abort."""
    try:
        data = msgspec.json.decode(frame)
    except msgspec.DecodeError:
        return False
    return isinstance(data, dict) and data.get("type") == "abort"


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
    owner: weakref.ref[object] | None = dataclasses.field(default=None, repr=False, compare=False)
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


@contextmanager
def entered(chat_id: str, key: str) -> Iterator[Scope]:
    """The running task works for unit `key` of `chat_id` inside the block."""
    scope = Scope.here(chat_id, key)
    token = SCOPE_VAR.set(scope)
    try:
        yield scope
    finally:
        SCOPE_VAR.reset(token)


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


_CURRENT_TASKS: dict[asyncio.AbstractEventLoop, asyncio.Task[object]] | None = getattr(
    asyncio.tasks, "_current_tasks", None
)
_THREAD = threading.local()


def running_task() -> asyncio.Task[object] | None:
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


def _weak(task: object) -> weakref.ref[object] | None:
    """A weak reference to `task` (None for none, or a task that takes none)."""
    try:
        return weakref.ref(task) if task is not None else None
    except TypeError:
        return None


def _task() -> tuple[int, str]:
    info = anyio.get_current_task()
    return info.id, info.name or ""


class Units:
    """The recorder's book of units: ordinals per unit (model calls, steps; in a replay
    also clock and id values and sync points), each socket's learner unit, each
    session-end request's unit, and where a cancelled turn was cut."""

    def __init__(self, *, replaying: bool) -> None:
        self.replaying = replaying
        self.counters: dict[tuple[str, str, str], int] = {}
        self._cuts: dict[tuple[str, str], int] = {}
        self._sockets: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()
        self._socket_counts: dict[str, int] = {}
        self._end_counts: dict[str, int] = {}

    def count(self, scope: Scope, kind: str) -> int:
        """The next ordinal of `kind` in `scope` (0, 1, ...)."""
        slot = (scope.chat_id, scope.key, kind)
        n = self.counters.get(slot, 0)
        self.counters[slot] = n + 1
        return n

    def replay_count(self, scope: Scope, kind: str) -> int:
        """`count`, kept only in a replay: the ordinals of clock and id values and of sync
        points are what a `Player` answers by; a recording writes none of them (so it
        keeps no counter for them)."""
        return self.count(scope, kind) if self.replaying else 0

    def peek(self, chat_id: str, key: str, kind: str) -> int:
        """The next ordinal of `kind` in unit `key`, not taken."""
        return self.counters.get((chat_id, key, kind), 0)

    def unit_done(self, chat_id: str, key: str) -> None:
        """The unit `key` (and its helper tasks, `key~name`) will number nothing more: a
        recording drops its counters, so a long-running server keeps none per finished
        turn, job or extraction run. A replay keeps them (it is short-lived, and a held
        unit may still pass sync points)."""
        self._cuts.pop((chat_id, key), None)
        if self.replaying:
            return
        child = key + "~"
        slots = [s for s in self.counters if s[0] == chat_id and _of_unit(s[1], key, child)]
        for slot in slots:
            del self.counters[slot]

    def cut(self, chat_id: str, key: str, n: int) -> None:
        """Unit `key`'s cancellation landed right after its sync point `n` (the first kept)."""
        self._cuts.setdefault((chat_id, key), n)

    def cut_after(self, chat_id: str, key: str) -> int:
        """The sync point of unit `key` its cancellation landed right after (-1: none);
        forgotten once asked."""
        return self._cuts.pop((chat_id, key), -1)

    def learner_unit(self, chat_id: str, socket: object) -> str:
        """The unit of the learner frames `socket` sends to `chat_id`: `learner:<n>`, n its
        ordinal among the chat's sockets. Each socket is its own unit, so a replay feeds
        each socket's frames on its own (two sockets racing replay as recorded)."""
        unit = self._sockets.get(socket)
        if unit is None:
            n = self._socket_counts.get(chat_id, 0)
            self._socket_counts[chat_id] = n + 1
            unit = self._sockets[socket] = f"learner:{n}"
        return unit

    def end_unit(self, chat_id: str) -> str:
        """The chat's next session-end request unit, `end:<n>`."""
        n = self._end_counts.get(chat_id, 0)
        self._end_counts[chat_id] = n + 1
        return f"end:{n}"

    def open_chats(self) -> set[str]:
        """Chats with a socket still open."""
        return {
            getattr(socket, "chat_id", "")
            for socket in list(self._sockets.keys())
            if not getattr(socket, "closed", False)
        }

    def running_chats(self) -> set[str]:
        """Chats with a unit still numbering something."""
        return {slot[0] for slot in self.counters}

    def chats(self) -> set[str]:
        return self._socket_counts.keys() | self._end_counts.keys()

    def forget(self, chat_id: str) -> None:
        self._socket_counts.pop(chat_id, None)
        self._end_counts.pop(chat_id, None)

    def entries(self) -> int:
        tables = (self._socket_counts, self._end_counts, self.counters, self._cuts)
        return sum(len(t) for t in tables)


def _of_unit(key: str, unit: str, child: str) -> bool:
    return key == unit or key.startswith(child)
