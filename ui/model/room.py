"""The classroom's canonical model and its reducers: frame → new model, as plain functions.

`Room` is what the UI knows about one open chat. It is built only from server frames and
the learner's own actions, so it never holds more than the API chose to show. Render
projections (`ui.model.render`) turn it into the public state vars.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal, get_args

import msgspec

from shared_contracts.chat import (
    UNTITLED,
    ChatMode,
    ChatView,
    Message,
    PendingQuestion,
    TextPart,
    ToolPart,
    title_from,
)
from shared_contracts.frames import (
    ErrorFrame,
    GraphUpdated,
    JobFrame,
    Plan,
    Pong,
    Question,
    ServerFrame,
    Snapshot,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnFinished,
    TurnStarted,
    VerdictFrame,
)
from shared_contracts.jobs import Job
from shared_contracts.plan import PlanTree

_replace = msgspec.structs.replace

Connection = Literal["idle", "connecting", "connected", "reconnecting", "closed"]
MAX_ERRORS = 3


class LocalMessage(msgspec.Struct, frozen=True, kw_only=True):
    """One conversation message as the UI holds it (a streamed one has no timestamp yet)."""

    id: str
    role: Literal["user", "assistant"]
    parts: tuple[TextPart | ToolPart, ...] = ()


class Room(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the classroom shows, as immutable data; reducers return a new Room."""

    chat_id: str = ""
    title: str = ""
    mode: ChatMode = "lesson"
    """`review`: a review session over what is due (the header says so)."""
    model: str = ""
    offline: bool = False
    loaded: bool = False
    messages: tuple[LocalMessage, ...] = ()
    plan: PlanTree | None = None
    pending: PendingQuestion | None = None
    submitted: str = ""
    """The tool-call id of an answer sent and not yet graded (the dock shows "checking…")."""
    last_verdict: VerdictFrame | None = None
    jobs: dict[str, Job] = msgspec.field(default_factory=dict)
    turn_running: bool = False
    streaming: str = ""
    """The id of the message text was last streamed into."""
    extracting: bool = False
    graph_notice: str = ""
    errors: tuple[str, ...] = ()
    connection: Connection = "idle"
    earlier: int = 0
    """How many of the chat's messages come before the first one held (a long chat opens
    at its latest page; "show earlier" fetches the rest a page at a time)."""
    loading_earlier: bool = False


def _from_message(message: Message) -> LocalMessage:
    return LocalMessage(id=message.id, role=message.role, parts=tuple(message.parts))


def _kept_before(room: Room, chat: ChatView) -> tuple[LocalMessage, ...]:
    """The earlier messages the room already loaded that come just before the page a
    snapshot starts at (a reconnect keeps what "show earlier" fetched)."""
    if not chat.messages or chat.earlier == 0:
        return ()
    first = chat.messages[0].id
    for index, message in enumerate(room.messages):
        if message.id == first:
            return room.messages[:index]
    return ()


def on_snapshot(room: Room, frame: Snapshot) -> Room:
    """The first frame after (re)connect replaces what the room knew about the chat (the
    earlier messages it loaded before the snapshot's page stay)."""
    chat: ChatView = frame.chat
    verdict = room.last_verdict
    if chat.pending_question is not None:
        verdict = None
    kept = _kept_before(room, chat)
    return _replace(
        room,
        chat_id=chat.id,
        title=chat.title,
        mode=chat.mode,
        model=chat.model,
        offline=chat.offline,
        loaded=True,
        messages=kept + tuple(_from_message(m) for m in chat.messages),
        earlier=max(0, chat.earlier - len(kept)),
        plan=chat.plan,
        pending=chat.pending_question,
        submitted="",
        last_verdict=verdict,
        turn_running=chat.turn_running,
        errors=(),
    )


def on_turn_started(room: Room, frame: TurnStarted) -> Room:
    """A new turn (the tutor handing on job results, say) moves the lesson past the last
    verdict: it stays in its question's card, not in the dock under later messages. (An
    answer's own turn starts before its verdict arrives.)"""
    return _replace(room, turn_running=True, last_verdict=None)


def _upsert_message(
    room: Room, message_id: str, change: Callable[[LocalMessage], LocalMessage]
) -> Room:
    messages = list(room.messages)
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].id == message_id:
            messages[index] = change(messages[index])
            return _replace(room, messages=tuple(messages))
    messages.append(change(LocalMessage(id=message_id, role="assistant")))
    return _replace(room, messages=tuple(messages))


def on_text_delta(room: Room, frame: TextDelta) -> Room:
    """Appends to the message's last text part, or starts one."""

    def grow(message: LocalMessage) -> LocalMessage:
        parts = list(message.parts)
        if parts and isinstance(parts[-1], TextPart):
            parts[-1] = TextPart(text=parts[-1].text + frame.delta)
        else:
            parts.append(TextPart(text=frame.delta))
        return _replace(message, parts=tuple(parts))

    return _upsert_message(_replace(room, streaming=frame.message_id), frame.message_id, grow)


def _replace_part(parts: Iterable[TextPart | ToolPart], part: ToolPart) -> tuple[bool, tuple]:
    found, out = False, []
    for existing in parts:
        if isinstance(existing, ToolPart) and existing.tool_call_id == part.tool_call_id:
            out.append(part)
            found = True
        else:
            out.append(existing)
    return found, tuple(out)


def on_tool_call(room: Room, frame: ToolCall) -> Room:
    def add(message: LocalMessage) -> LocalMessage:
        found, parts = _replace_part(message.parts, frame.part)
        if not found:
            parts = (*parts, frame.part)
        return _replace(message, parts=parts)

    return _upsert_message(room, frame.message_id, add)


def on_tool_result(room: Room, frame: ToolResult) -> Room:
    """Replaces the part with the same tool-call id wherever it is; a result for the open
    question (its answer recorded, or the call refused) closes the dock."""
    return _settle_question(_with_result(room, frame.part), frame.part)


def _with_result(room: Room, part: ToolPart) -> Room:
    messages = list(room.messages)
    for index in range(len(messages) - 1, -1, -1):
        found, parts = _replace_part(messages[index].parts, part)
        if found:
            messages[index] = _replace(messages[index], parts=parts)
            return _replace(room, messages=tuple(messages))
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    if last is None:
        return _upsert_message(room, "pending-tools", lambda m: _append(m, part))
    return _upsert_message(room, last.id, lambda m: _append(m, part))


def _settle_question(room: Room, part: ToolPart) -> Room:
    """A free-form question's answer gets no verdict: its tool result is what ends it."""
    pending = room.pending
    if pending is None or pending.tool_call_id != part.tool_call_id:
        return room
    if part.state not in ("output-available", "output-error"):
        return room
    return _replace(room, pending=None, submitted="")


def _append(message: LocalMessage, part: ToolPart) -> LocalMessage:
    return _replace(message, parts=(*message.parts, part))


def on_plan(room: Room, frame: Plan) -> Room:
    return _replace(room, plan=frame.tree)


def on_question(room: Room, frame: Question) -> Room:
    tool_name = "ask_user_question" if frame.question.kind == "ask_user" else "quiz"
    pending = PendingQuestion(
        tool_call_id=frame.tool_call_id, tool_name=tool_name, question=frame.question
    )
    return _replace(room, pending=pending, submitted="")


def on_verdict(room: Room, frame: VerdictFrame) -> Room:
    pending = room.pending
    if pending is not None and pending.tool_call_id == frame.tool_call_id:
        pending = None
    return _replace(room, pending=pending, submitted="", last_verdict=frame)


def on_job(room: Room, frame: JobFrame) -> Room:
    return _replace(room, jobs={**room.jobs, frame.job.id: frame.job})


def on_turn_finished(room: Room, frame: TurnFinished) -> Room:
    """The asking turn ends `awaiting_answer`, maybe after the learner already answered:
    the answer's own turn is still to come, so "checking…" stays. Any other ending is the
    answer's turn over without recording it (a recorded answer's tool result came first):
    the question is still open, and the dock takes an answer again."""
    submitted = room.submitted
    stale = room.pending is None or room.pending.tool_call_id != submitted
    if stale or frame.reason != "awaiting_answer":
        submitted = ""
    return _replace(room, turn_running=False, submitted=submitted)


def graph_notice(count: int) -> str:
    """ "3 new things in your graph" (or a neutral line when nothing new was added)."""
    if count <= 0:
        return "Your graph is up to date"
    return f"{count} new thing{'s' if count != 1 else ''} in your graph"


def on_graph_updated(room: Room, frame: GraphUpdated) -> Room:
    return _replace(room, extracting=False, graph_notice=graph_notice(len(frame.new_nodes)))


def on_error(room: Room, frame: ErrorFrame) -> Room:
    """Errors are shown in place; an error after an answer lets the learner answer again."""
    pending = room.pending
    if frame.code == "no_pending_question":
        pending = None
    errors = (*room.errors, frame.message or frame.code)[-MAX_ERRORS:]
    return _replace(room, errors=errors, submitted="", pending=pending)


def on_pong(room: Room, frame: Pong) -> Room:
    return room


HANDLERS: dict[type, Callable[[Room, Any], Room]] = {
    Snapshot: on_snapshot,
    TurnStarted: on_turn_started,
    TextDelta: on_text_delta,
    ToolCall: on_tool_call,
    ToolResult: on_tool_result,
    Plan: on_plan,
    Question: on_question,
    VerdictFrame: on_verdict,
    JobFrame: on_job,
    TurnFinished: on_turn_finished,
    GraphUpdated: on_graph_updated,
    ErrorFrame: on_error,
    Pong: on_pong,
}
SERVER_FRAME_TYPES: tuple[type, ...] = get_args(ServerFrame)


def apply_frame(room: Room, frame: ServerFrame) -> Room:
    """The one reducer: dispatches on the frame's type (every ServerFrame member has one)."""
    return HANDLERS[type(frame)](room, frame)


def apply_frames(room: Room, frames: Iterable[ServerFrame]) -> Room:
    """Applies a batch of frames in order."""
    for frame in frames:
        room = apply_frame(room, frame)
    return room


# --- the learner's own actions -------------------------------------------------------


def user_sent(room: Room, text: str, client_id: str) -> Room:
    """Shows the learner's message at once (the server has no echo frame), and the title
    it gives an untitled chat (as the server does). The last verdict leaves the dock: the
    learner has moved on (the question keeps it inline)."""
    message = LocalMessage(id=client_id, role="user", parts=(TextPart(text=text),))
    title = title_from(text) if room.title == UNTITLED else room.title
    return _replace(
        room, messages=(*room.messages, message), title=title, errors=(), last_verdict=None
    )


def answer_sent(room: Room, tool_call_id: str) -> Room:
    """The learner answered: the dock shows "checking…" and the previous verdict goes."""
    return _replace(room, submitted=tool_call_id, last_verdict=None, errors=())


def extraction_started(room: Room) -> Room:
    return _replace(room, extracting=True, graph_notice="")


def with_connection(room: Room, connection: Connection) -> Room:
    return _replace(room, connection=connection)


def with_error(room: Room, message: str) -> Room:
    return _replace(room, errors=(*room.errors, message)[-MAX_ERRORS:])


def dismiss_errors(room: Room) -> Room:
    return _replace(room, errors=())


def earlier_cursor(room: Room) -> str:
    """The id of the first message held, to fetch the page before it ("" when none)."""
    if room.earlier <= 0 or not room.messages:
        return ""
    return room.messages[0].id


def earlier_requested(room: Room) -> Room:
    return _replace(room, loading_earlier=True)


def with_earlier(room: Room, page: ChatView) -> Room:
    """A page of earlier messages goes before the ones held (any it repeats are skipped)."""
    held = {m.id for m in room.messages}
    older = tuple(_from_message(m) for m in page.messages if m.id not in held)
    return _replace(
        room, messages=older + room.messages, earlier=page.earlier, loading_earlier=False
    )


def earlier_failed(room: Room, message: str) -> Room:
    return with_error(_replace(room, loading_earlier=False), message)


def missing_job_results(room: Room) -> list[str]:
    """Ids of finished jobs whose result the room has not seen (fetched over HTTP)."""
    missing = []
    for message in room.messages:
        for part in message.parts:
            if not isinstance(part, ToolPart) or part.job_id is None:
                continue
            job = room.jobs.get(part.job_id)
            if job is not None and (job.result is not None or job.status != "done"):
                continue
            output = part.output
            if output is not None and getattr(output, "result", None) is not None:
                continue
            status = getattr(output, "status", None) if output is not None else None
            if status == "done" or (job is not None and job.status == "done"):
                missing.append(part.job_id)
    return missing


def with_job(room: Room, job: Job) -> Room:
    return _replace(room, jobs={**room.jobs, job.id: job})
