"""The chat record (one JSON file per chat) and the views of it sent to clients."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import msgspec

from shared_contracts.base import Body, Id, Record, ToolCallId
from shared_contracts.plan import PlanTree
from shared_contracts.questions import PublicQuestion
from shared_contracts.tools import ToolOutput

UNTITLED = "New session"
"""A chat's title until its first learner message names it (`title_from`)."""


def title_from(text: str) -> str:
    """The title a chat takes from its first learner message: whitespace folded, at most
    60 characters (then an ellipsis). The server stores it; the classroom shows it at once."""
    first = " ".join(text.split())
    return first[:60] + ("…" if len(first) > 60 else "")


ChatMode = Literal["lesson", "review"]
"""`review`: the teacher gets the learner's review queue and probes its items."""

ToolState = Literal["input-streaming", "input-available", "output-available", "output-error"]
Role = Literal["user", "assistant"]


# gc=False (messages, parts, tool outputs, verdicts): these never refer back to what holds
# them, so they cannot form a cycle; untracked, each costs 16 bytes less and no collector
# work.
class TextPart(Record, tag_field="type", tag="text", kw_only=True, gc=False, frozen=True):
    text: str


class ToolPart(Record, tag_field="type", tag="tool", kw_only=True, gc=False, frozen=True):
    """One tool call and, once it has one, its output or error.

    `input` is the model's decoded arguments as sent. For a quiz it holds the answer key,
    so views sent to clients replace it (see `ChatView`).
    """

    tool_call_id: ToolCallId
    tool_name: str
    state: ToolState
    input: dict[str, Any] = msgspec.field(default_factory=dict)
    output: ToolOutput | None = None
    error: str = ""
    job_id: Id | None = None


class NoticePart(Record, tag_field="type", tag="notice", kw_only=True, gc=False, frozen=True):
    """A server-authored note in a user-role message (e.g. a job result was delivered)."""

    kind: Literal["job_delivered"]
    text: str
    job_id: Id | None = None
    tool_call_id: ToolCallId | None = None


Part = TextPart | ToolPart | NoticePart


class Message(Record, kw_only=True, gc=False, frozen=True):
    id: Id
    role: Role
    turn: int
    created_at: datetime
    parts: list[Part] = msgspec.field(default_factory=list)


class PendingQuestion(Body, kw_only=True, frozen=True):
    tool_call_id: ToolCallId
    tool_name: Literal["quiz", "ask_user_question"]
    question: PublicQuestion


class ForkOrigin(Record, kw_only=True, frozen=True):
    chat_id: Id
    from_turn: int


# weakref: the chat store caches a decoded record while a turn uses it.
class ChatRecord(Record, kw_only=True, weakref=True, frozen=True):
    """Everything a chat is, persisted whole on every turn finish."""

    id: Id
    title: str
    created_at: datetime
    updated_at: datetime
    model: str = "offline"
    messages: list[Message] = msgspec.field(default_factory=list)
    plan: PlanTree | None = None
    turns: int = 0
    forked_from: ForkOrigin | None = None
    format: int = 1
    material_id: Id | msgspec.UnsetType = msgspec.UNSET
    """The learner's document this session teaches from (`POST /api/chats` with one);
    unset (and not written) for any other session."""
    mode: ChatMode | msgspec.UnsetType = msgspec.UNSET
    """`review`: a review session over the learner's review queue; unset (and not written)
    for a lesson, so a lesson's record encodes as before."""


class ChatSummary(Body, kw_only=True, frozen=True):
    id: Id
    title: str
    created_at: datetime
    updated_at: datetime
    model: str
    turns: int
    messages: int
    material_id: Id | msgspec.UnsetType = msgspec.UNSET
    mode: ChatMode = "lesson"


class ChatView(Body, kw_only=True, frozen=True):
    """A chat as a client may see it: quiz keys of unanswered questions removed."""

    id: Id
    title: str
    created_at: datetime
    updated_at: datetime
    model: str
    offline: bool
    messages: list[Message] = msgspec.field(default_factory=list)
    plan: PlanTree | None = None
    pending_question: PendingQuestion | None = None
    turn_running: bool = False
    turns: int = 0
    material_id: Id | msgspec.UnsetType = msgspec.UNSET
    earlier: int = 0
    """How many of the chat's messages come before `messages` (a page of a long chat:
    `GET /api/chats/{id}?before=&limit=`, the socket's `?limit=`); 0 when `messages`
    starts at the chat's first."""
    mode: ChatMode = "lesson"
