"""Projection of a `Room` into the classroom's render-ready values, as one typed view
(`RoomView`): the conversation's blocks (`conversation`), the plan rows, the question
dock, the last verdict and the status line.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ui.model.conversation import ChatItem, chat_items, math_ready, question_key, turn_start
from ui.model.mathdelims import plain_words
from ui.model.plan_view import PlanRow, plan_rows
from ui.model.room import Room


@dataclasses.dataclass
class OptionView:
    id: str = ""
    text: str = ""
    label: str = ""
    """`text` as plain words: a radio card's accessible name (KaTeX gives none), and a
    suggestion chip's face and the answer it fills in."""


@dataclasses.dataclass
class DockView:
    """The question dock: the pending question (never a key) while one is open."""

    visible: bool = False
    id: str = ""
    kind: str = ""
    prompt: str = ""
    unit: str = ""
    options: list[OptionView] = dataclasses.field(default_factory=list)
    checking: bool = False
    """An answer was sent and not yet graded: the dock shows "Checking…"."""


@dataclasses.dataclass
class VerdictView:
    """The last verdict, shown under the conversation until the lesson moves on: next to
    the dock the learner just answered in. Its question's block in the conversation leaves
    it to this card meanwhile (see `in_card`), and shows it once it is history."""

    visible: bool = False
    question: str = ""
    """The conversation key (`ChatItem.key`) of the question block it grades ("" if none)."""
    correct: bool = False
    expected: str = ""
    feedback: str = ""


def in_card(item_key: Any, verdict: Any) -> Any:
    """Whether the question block `item_key` leaves its verdict to the card (it is the
    latest), so the learner sees each verdict once. One rule over values (tests) and over
    Reflex vars (the block, `ui.components.chat_items`): compared in the browser, a verdict
    coming or going sends the card's state only, not the conversation's lists again."""
    return verdict.question == item_key


@dataclasses.dataclass
class StatusView:
    """The status line: connection, tutor label, extraction and the latest error."""

    connection: str = "idle"
    connection_label: str = "Not connected"
    tutor_label: str = ""
    title: str = ""
    review: bool = False
    """A review session (a chat in `review` mode): the header marks it."""
    turn_running: bool = False
    extracting: bool = False
    graph_notice: str = ""
    error: str = ""


@dataclasses.dataclass
class EarlierView:
    """The "show earlier messages" control above a long chat's latest page."""

    count: int = 0
    loading: bool = False
    label: str = ""


def earlier(room: Room) -> EarlierView:
    if room.earlier <= 0:
        return EarlierView()
    noun = "message" if room.earlier == 1 else "messages"
    return EarlierView(
        count=room.earlier,
        loading=room.loading_earlier,
        label=f"Show earlier messages ({room.earlier:,} more {noun})",
    )


@dataclasses.dataclass
class LiveText:
    """The streamed text at the end of the conversation (the last part of the message text
    was last streamed into): sent and drawn apart from the blocks before it, with only the
    fields a text block needs (a `ChatItem` carries 22). It stays there when the turn ends;
    it joins the turn's other blocks when something follows it (a tool call's card, the
    next message): one redraw of that block then, none of the others for every token."""

    role: str = "assistant"
    text: str = ""


def live_text(room: Room, turn: list[ChatItem]) -> LiveText:
    """Takes the streamed text block off the end of `turn`, if that is where it is."""
    message = room.messages[-1] if room.messages else None
    if not turn or message is None or message.id != room.streaming or not message.parts:
        return LiveText()
    if turn[-1].kind != "text" or turn[-1].key != f"{message.id}:{len(message.parts) - 1}":
        return LiveText()
    last = turn.pop()
    return LiveText(role=last.role, text=last.text)


@dataclasses.dataclass
class RoomView:
    """Everything the classroom page shows, computed from the room."""

    items: list[ChatItem] = dataclasses.field(default_factory=list)
    """The conversation before the latest turn (a token never changes it)."""
    turn_items: list[ChatItem] = dataclasses.field(default_factory=list)
    """The latest turn's blocks before `live` (the learner's message, asked questions)."""
    live: LiveText = dataclasses.field(default_factory=LiveText)
    """The turn's closing tutor text: all that a streamed token changes."""
    plan_goal: str = ""
    plan: list[PlanRow] = dataclasses.field(default_factory=list)
    dock: DockView = dataclasses.field(default_factory=DockView)
    verdict: VerdictView = dataclasses.field(default_factory=VerdictView)
    status: StatusView = dataclasses.field(default_factory=StatusView)
    earlier: EarlierView = dataclasses.field(default_factory=EarlierView)


def dock(room: Room) -> DockView:
    pending = room.pending
    if pending is None:
        return DockView()
    question = pending.question
    return DockView(
        visible=True,
        id=pending.tool_call_id,
        kind=question.kind,
        prompt=math_ready(question.prompt),
        unit=question.unit,
        options=[
            OptionView(id=o.id, text=math_ready(o.text), label=plain_words(o.text))
            for o in question.options
        ],
        checking=room.submitted == pending.tool_call_id,
    )


def verdict(room: Room) -> VerdictView:
    last = room.last_verdict
    if last is None:
        return VerdictView()
    return VerdictView(
        visible=True,
        question=question_key(room, last.tool_call_id),
        correct=last.correct,
        expected=math_ready(last.expected),
        feedback=math_ready(last.feedback),
    )


CONNECTION_LABELS = {
    "idle": "Not connected",
    "connecting": "Connecting…",
    "connected": "Connected",
    "reconnecting": "Reconnecting…",
    "closed": "Disconnected",
}


def status(room: Room) -> StatusView:
    if not room.loaded:
        tutor = ""
    elif room.offline:
        tutor = "Offline tutor"
    else:
        tutor = room.model
    return StatusView(
        connection=room.connection,
        connection_label=CONNECTION_LABELS[room.connection],
        tutor_label=tutor,
        title=room.title,
        review=room.mode == "review",
        turn_running=room.turn_running,
        extracting=room.extracting,
        graph_notice=room.graph_notice,
        error=room.errors[-1] if room.errors else "",
    )


def project(room: Room) -> RoomView:
    """The classroom's view of the room."""
    start = turn_start(room)
    turn = chat_items(room, start=start)
    live = live_text(room, turn)
    return RoomView(
        items=chat_items(room, stop=start),
        turn_items=turn,
        live=live,
        plan_goal=room.plan.goal if room.plan else "",
        plan=plan_rows(room.plan),
        dock=dock(room),
        verdict=verdict(room),
        status=status(room),
        earlier=earlier(room),
    )
