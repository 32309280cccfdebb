"""The replay page's state: one session's trace, the timeline filter and the selected event."""

from __future__ import annotations

import re

import reflex as rx

from shared_contracts.base import ID_PATTERN
from shared_contracts.trace import AnyTraceEvent
from ui import api
from ui.model import replay_detail, replay_timeline
from ui.model.replay_parts import EventDetail
from ui.model.replay_timeline import KindChip, TimelineRow

_ID = re.compile(ID_PATTERN)
_PATH = re.compile(r"^/replay/([^/]+)/?$")


def chat_id_from_replay_path(path: str) -> str:
    """`/replay/<id>` → `<id>` when it is a valid id, else ""."""
    match = _PATH.match(path)
    tail = match.group(1) if match else ""
    return tail if _ID.match(tail) and "\n" not in tail else ""


def trace_problem(chat_id: str, error: api.ApiError) -> str:
    """What the page says when the trace could not be fetched."""
    if error.status == 404:
        return f"There is no session “{chat_id}”."
    if error.status == 409:  # a turn is running: it may be asking a question right now
        return "A turn is running in this session: reload this page once it has ended."
    return str(error)


class ReplayState(rx.State):
    """Public vars are render rows and one detail; the raw events stay server-side."""

    chat_id: str = ""
    exists: bool = True
    """False once the API said there is no such session (no link back to it)."""
    title: str = ""
    loading: bool = False
    problem: str = ""
    """Why there is nothing to show (not found, empty trace, API down); "" when loaded."""
    rows: rx.Field[list[TimelineRow]] = rx.field(default_factory=list)
    chips: rx.Field[list[KindChip]] = rx.field(default_factory=list)
    total: int = 0
    selected_seq: int = -1
    detail: EventDetail = EventDetail()
    has_detail: bool = False

    _events: tuple[AnyTraceEvent, ...] = ()
    _kinds: frozenset[str] = replay_timeline.DEFAULT_KINDS

    def _refresh(self) -> None:
        self.rows = replay_timeline.timeline(self._events, self._kinds)
        self.chips = replay_timeline.chips(self._events, self._kinds)

    def _show(self, events: list[AnyTraceEvent]) -> None:
        self._events = tuple(replay_timeline.ordered(events))
        self.total = len(events)
        self.title = replay_timeline.session_title(self._events)
        self.problem = "" if events else "No trace was recorded for this session yet."
        self._refresh()

    def _reset(self, chat_id: str) -> None:
        """Forgets the previous session's trace (the state outlives a page change)."""
        self.chat_id, self.title, self.total, self.exists = chat_id, "", 0, bool(chat_id)
        self.selected_seq, self.has_detail, self.detail = -1, False, EventDetail()
        self._events, self._kinds = (), replay_timeline.DEFAULT_KINDS
        self._refresh()

    @rx.event
    async def load(self) -> None:
        """on_load: fetches the trace of the chat in the URL."""
        chat_id = chat_id_from_replay_path(self.router.url.path)
        self._reset(chat_id)
        if not chat_id:
            self.problem = "This is not a session address."
            return
        self.loading, self.problem = True, ""
        try:
            events = await api.get_trace(chat_id)
        except api.ApiError as exc:
            self.problem, self.exists = trace_problem(chat_id, exc), exc.status != 404
            return
        finally:
            self.loading = False
        self._show(events)

    @rx.event
    def toggle_kind(self, kind: str) -> None:
        """Shows or hides one kind of event in the timeline."""
        self._kinds = self._kinds ^ {kind}
        self._refresh()

    @rx.event
    def show_all(self) -> None:
        self._kinds = frozenset(k for k, _ in replay_timeline.KINDS)
        self._refresh()

    @rx.event
    def select(self, seq: int) -> None:
        """Opens one event's detail on the right."""
        found = replay_detail.detail(self._events, seq)
        self.has_detail = found is not None
        self.detail = found or EventDetail()
        self.selected_seq = seq if found is not None else -1
