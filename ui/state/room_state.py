"""The classroom's state: one WebSocket per open chat, held by a background task."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import msgspec
import reflex as rx

from shared_contracts.base import ID_PATTERN
from shared_contracts.frames import Abort, UserMessage
from ui import api, outbox, practise
from ui.answers import build_answer
from ui.link import run_link
from ui.model import render
from ui.model.conversation import ChatItem
from ui.model.plan_view import PlanRow
from ui.model.render import DockView, EarlierView, LiveText, StatusView, VerdictView
from ui.model.room import (
    Room,
    answer_sent,
    apply_frames,
    earlier_cursor,
    earlier_failed,
    earlier_requested,
    extraction_started,
    missing_job_results,
    user_sent,
    with_connection,
    with_earlier,
    with_error,
    with_job,
)
from ui.settings import PAGE_MESSAGES

FOLLOW_ID = "follow"
"""The box after the classroom that the page scrolls to and anchors on (see `classroom`)."""
COMPOSER_ID = "composer"
ANSWER_INPUT_ID = "answer-input"
ANSWER_CHOICES_ID = "answer-choices"
"""Where keyboard focus goes: the dock's control while a question is open, else the
composer (a multiple-choice group passes focus on to its picked or first card)."""

ENCODER = msgspec.json.Encoder()
_ID = re.compile(ID_PATTERN)
_PATH = re.compile(r"^/chat/([^/]+)/?$")


def chat_id_from_path(path: str) -> str:
    """`/chat/<id>` → `<id>` when it is a valid id, else ""."""
    match = _PATH.match(path)
    tail = match.group(1) if match else ""
    return tail if _ID.match(tail) and "\n" not in tail else ""


class RoomState(rx.State):
    """The classroom's socket, handlers and the few vars that change only when the learner
    acts (the address, the composer's draft, the plan toggle). What the server's frames
    change lives in substates of its own (`ChatLogState`, `TurnState`, `LiveState`,
    `StatusState`, `DockState`, `VerdictState`, `PlanState`): the browser redraws everything
    that reads a state whenever any var of it changes, so a streamed token (20 a second)
    sends and redraws the answer's growing text only, and a verdict its card, the dock and
    the question's block. Nothing secret is ever
    public: public vars are the render projection of `_room`."""

    room_id: str = ""
    draft: str = ""
    plan_open: bool = True

    _room: Room = Room()
    _generation: int = 0
    _sent: int = 0

    def _part(self, cls: type[RoomState]) -> Any:
        return self.get_substate([cls.get_name()])

    def _dock(self) -> DockState:
        dock: DockState = self._part(DockState)
        return dock

    def _publish(self, room: Room) -> None:
        """Stores the room and assigns only the public vars whose value changed (an
        assignment is a delta sent to the browser, and a redraw of its state's readers)."""
        self._room = room
        view = render.project(room)
        for cls, shown in ROOM_PARTS.items():
            part = self._part(cls)
            for name in shown:
                value = getattr(view, name)
                if getattr(part, name) != value:
                    setattr(part, name, value)

    def _box(self) -> str:
        return outbox.key(self.router.session.client_token, self.room_id)

    @rx.event(background=True)
    async def open_room(self) -> None:
        """on_load: (re)opens the socket for the chat in the URL and holds it while the tab
        shows this classroom. Reflex cancels a page's unfinished on_load work when its tab
        disconnects or navigates away (the socket's task ends with it); a later open of
        the room, or `leave`, ends the older link by generation."""
        async with self:
            chat_id = chat_id_from_path(self.router.url.path)
            self._generation += 1
            generation = self._generation
            self.room_id = chat_id
            self.draft = ""
            self._dock().clear_answer()
            self._publish(Room(chat_id=chat_id))
            if not chat_id:
                self._publish(with_error(self._room, "This is not a session address."))
                return
            box = self._box()
            ask = practise.clean_ask(self.router.url.query_parameters.get("ask", ""))
        queue = outbox.open_box(box)
        fetched: set[str] = set()

        async def apply(frames: list[Any], connection: Any) -> bool:
            nonlocal ask
            async with self:
                if self._generation != generation:
                    return False
                room = apply_frames(self._room, frames)
                if connection is not None:
                    room = with_connection(room, connection)
                if ask and practise.ready_to_ask(room):
                    room, ask = self._ask_once(room, ask, box), ""
                if room is not self._room:
                    self._publish(room)
                missing = [j for j in missing_job_results(room) if j not in fetched]
            for job_id in missing:
                fetched.add(job_id)
                await self._fetch_job(job_id, generation)
            return True

        async def on_error(message: str) -> None:
            async with self:
                if self._generation == generation:
                    self._publish(with_error(self._room, message))

        try:
            await run_link(chat_id, queue, apply, on_error)
        finally:
            outbox.close_box(box, queue)

    def _ask_once(self, room: Room, text: str, box: str) -> Room:
        """Sends a "practise this" opening message (`?ask=`) as the learner's first message."""
        self._sent += 1
        client_id = f"local-{self._sent}"
        if not outbox.post(box, ENCODER.encode(UserMessage(text=text, client_id=client_id))):
            return room
        return user_sent(room, text, client_id)

    async def _fetch_job(self, job_id: str, generation: int) -> None:
        try:
            job = await api.get_job(job_id)
        except api.ApiError as exc:
            job, message = None, str(exc)
        async with self:
            if self._generation != generation:
                return
            if job is None:
                self._publish(with_error(self._room, message))
            else:
                self._publish(with_job(self._room, job))

    @rx.event(background=True)
    async def show_earlier(self) -> None:
        """Loads the page of messages before the first one shown."""
        async with self:
            chat_id, before = self.room_id, earlier_cursor(self._room)
            if not before or self._room.loading_earlier:
                return
            generation = self._generation
            self._publish(earlier_requested(self._room))
        try:
            page = await api.get_chat_page(chat_id, before, PAGE_MESSAGES)
        except api.ApiError as exc:
            page, message = None, f"Could not load earlier messages: {exc}"
        async with self:
            if self._generation != generation:
                return
            if page is None:
                self._publish(earlier_failed(self._room, message))
            else:
                self._publish(with_earlier(self._room, page))

    @rx.event
    def leave(self) -> None:
        """Stops this tab's socket task (it notices within a second)."""
        self._generation += 1

    @rx.event
    def set_draft(self, value: str) -> None:
        self.draft = value

    @rx.event
    def send_message(self, form_data: dict | None = None) -> rx.event.EventSpec | None:
        """Sends the composer's text as a `user_message` frame."""
        text = self.draft.strip()
        if not text:
            return
        if self._room.turn_running:
            self._publish(with_error(self._room, "The tutor is still answering; wait a moment."))
            return
        self._sent += 1
        client_id = f"local-{self._sent}"
        frame = ENCODER.encode(UserMessage(text=text[:16_000], client_id=client_id))
        if not outbox.post(self._box(), frame):
            self._publish(with_error(self._room, "Not connected yet; try again in a moment."))
            return
        self.draft = ""
        self._publish(user_sent(self._room, text, client_id))
        return rx.scroll_to(FOLLOW_ID)  # to the bottom: the answer is followed from there

    def _focus_here(self) -> rx.event.EventSpec:
        """Focus to where the learner acts next, so a keyboard user never lands on <body>."""
        dock = self._dock().dock
        if not dock.visible:
            return rx.set_focus(COMPOSER_ID)
        return rx.set_focus(
            ANSWER_CHOICES_ID if dock.kind == "multiple_choice" else ANSWER_INPUT_ID
        )

    @rx.event
    def stop_turn(self) -> rx.event.EventSpec | None:
        """Asks the server to stop the running turn (`abort`); what was written is kept.
        Focus goes to the composer: the Stop button is about to give way to Send."""
        if not self._room.turn_running:
            return None
        if not outbox.post(self._box(), ENCODER.encode(Abort())):
            self._publish(with_error(self._room, "Not connected; the tutor could not be stopped."))
        return self._focus_here()

    @rx.event
    def pick_choice(self, option_id: str) -> None:
        part = self._dock()
        part.choice = option_id
        part.dock_hint = ""

    @rx.event
    def set_answer_text(self, value: str) -> None:
        part = self._dock()
        part.answer_text = value
        part.dock_hint = ""

    @rx.event
    def use_suggestion(self, text: str) -> rx.event.EventSpec:
        """A chip fills the answer and hands focus to it: Enter then submits, or edit it."""
        part = self._dock()
        part.answer_text = text
        part.dock_hint = ""
        return rx.set_focus(ANSWER_INPUT_ID)

    @rx.event
    def set_confidence(self, value: str | list[str]) -> None:
        choice = value[0] if isinstance(value, list) and value else value
        sure = "" if not isinstance(choice, str) or choice == "unsaid" else choice
        self._dock().confidence = sure

    @rx.event
    def submit_answer(self) -> None:
        """Sends the dock's answer as an `answer` frame; the server grades it. The dock's
        controls live in state, so the form passes no form data (none is read)."""
        part = self._dock()
        dock = part.dock
        if not dock.visible or dock.checking:
            return
        frame = build_answer(dock.id, dock.kind, part.choice, part.answer_text, part.confidence)
        if isinstance(frame, str):
            part.dock_hint = frame
            return
        if not outbox.post(self._box(), ENCODER.encode(frame)):
            part.dock_hint = "Not connected; your answer was not sent. Try again in a moment."
            return
        part.choice = part.answer_text = part.dock_hint = ""
        self._publish(answer_sent(self._room, dock.id))

    @rx.event
    def choices_key(self, key: str) -> None:
        """Enter on an option card submits, as "Enter submits" promises: Radix keeps Enter
        from reaching the form (the WAI-ARIA radio pattern picks with Space only)."""
        if key == "Enter":
            self.submit_answer()

    @rx.event
    def toggle_plan(self) -> None:
        self.plan_open = not self.plan_open

    @rx.event
    def dismiss_error(self) -> rx.event.EventSpec:
        """The alert (and its focused button) goes away: focus back where the learner acts."""
        self._publish(msgspec.structs.replace(self._room, errors=()))
        return self._focus_here()

    @rx.event(background=True)
    async def end_session(self):
        """Runs the session-end extraction flush, then goes home to watch the graph grow."""
        async with self:
            chat_id = self.room_id
            if not chat_id or self._room.extracting:
                return
            self._publish(extraction_started(self._room))
        try:
            await api.extract(chat_id)
        except api.ApiError as exc:
            async with self:
                room = msgspec.structs.replace(self._room, extracting=False)
                self._publish(with_error(room, f"Could not end the session: {exc}"))
            return
        await asyncio.sleep(0)
        async with self:
            self._generation += 1
        return rx.redirect(f"/?after={chat_id}")


class ChatLogState(RoomState):
    """The conversation before the latest turn: a long chat's whole history, which a
    streamed token never changes; and the "show earlier" control above it."""

    items: rx.Field[list[ChatItem]] = rx.field(default_factory=list)
    earlier: EarlierView = EarlierView()


class TurnState(RoomState):
    """The latest turn's blocks before its closing tutor text (the learner's message, the
    questions asked): a tool call or a result changes them, a token does not."""

    turn_items: rx.Field[list[ChatItem]] = rx.field(default_factory=list)


class LiveState(RoomState):
    """The streamed text at the end of the conversation: all that a streamed token changes."""

    live: LiveText = LiveText()


class StatusState(RoomState):
    """The status line (connection, tutor, a turn running, extraction, the latest error)."""

    status: StatusView = StatusView()


class PlanState(RoomState):
    plan_goal: str = ""
    plan: rx.Field[list[PlanRow]] = rx.field(default_factory=list)


class DockState(RoomState):
    """The question dock: the open question, and the learner's answer as they give it."""

    dock: DockView = DockView()
    choice: str = ""
    answer_text: str = ""
    confidence: str = ""
    dock_hint: str = ""

    def clear_answer(self) -> None:
        self.choice = self.answer_text = self.confidence = self.dock_hint = ""


class VerdictState(RoomState):
    """The last verdict's card under the conversation."""

    verdict: VerdictView = VerdictView()


ROOM_PARTS: dict[type[RoomState], tuple[str, ...]] = {
    ChatLogState: ("items", "earlier"),
    TurnState: ("turn_items",),
    LiveState: ("live",),
    StatusState: ("status",),
    PlanState: ("plan_goal", "plan"),
    DockState: ("dock",),
    VerdictState: ("verdict",),
}
"""Each part of the classroom and its vars that `RoomState._publish` copies from the
room's projection (`render.RoomView`)."""
