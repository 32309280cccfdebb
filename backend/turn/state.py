"""The running turn's working state (the record on disk is the truth)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from backend.core.record_ops import with_part
from shared_contracts.chat import ChatMode, Message, Part, TextPart
from shared_contracts.frames import ServerFrame

FrameSink = Callable[[ServerFrame], Awaitable[None]]
"""Where a turn's frames go (the hub's `TurnSink`, or a list in tests)."""


class FrameHub(Protocol):
    """Where the app's turns send their frames: a chat's sink (the server's `ChatHub`,
    which queues them for the chat's sockets and records them)."""

    def sink(self, chat_id: str) -> FrameSink: ...


@dataclass
class OpenTurn:
    """One turn while it runs: its number, its frames' sink and the assistant message."""

    chat_id: str
    turn_id: int
    sink: FrameSink
    assistant: Message
    partial: list[str] = field(default_factory=list)
    """Text streamed in the current step, not yet a part."""
    question_asked: bool = False
    may_be_silent: bool = False
    """A turn that only hands job results to the teacher may end without a word."""
    saved: Message | None = None
    """The assistant message as last persisted (a finish with nothing new writes nothing)."""
    mode: ChatMode = "lesson"
    """The chat's mode (a review session's teacher gets its due items)."""
    material_id: str | None = None
    """The learner's document the chat was started on (its plan passages default to it)."""

    def add(self, part: Part) -> None:
        """Add `part` to the assistant message (a tool part replaces its earlier state)."""
        self.assistant = with_part(self.assistant, part)

    def message_so_far(self) -> Message:
        """The assistant message with the text streamed so far (for a socket opening now)."""
        if not self.partial:
            return self.assistant
        return with_part(self.assistant, TextPart(text="".join(self.partial)))

    def keep_partial(self) -> None:
        """Make the streamed text a part (at a finish: what the learner saw is kept)."""
        if self.partial:
            self.add(TextPart(text="".join(self.partial)))
            self.partial.clear()
