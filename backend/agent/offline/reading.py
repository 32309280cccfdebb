"""What the offline tutor reads back from a transcript: its own calls and their results.

Everything the tutor decides is derived from here, so a resumed or replayed session
continues exactly where the transcript left off.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from shared_contracts.model_io import ModelMessage
from shared_contracts.tools import ToolOutput

NOTICE_PREFIX = "[notice]"
_OUTPUT = msgspec.json.Decoder(ToolOutput)

Outcome = ToolOutput | Literal["error"] | None
"""A decoded tool output, "error", or None (no result yet, e.g. a job still running)."""


@dataclass(frozen=True)
class Call:
    """One tool call found in the transcript, with its result text when there is one."""

    id: str
    name: str
    args: dict[str, Any]
    """The decoded JSON arguments; {} when they were not a JSON object."""
    msg_index: int
    result: str | None
    result_index: int = -1

    @property
    def node_id(self) -> str | None:
        value = self.args.get("node_id", self.args.get("id"))
        return value if isinstance(value, str) else None

    def outcome(self) -> Outcome:
        return read_outcome(self.result)


@dataclass(frozen=True)
class Transcript:
    """The transcript split into the facts the tutor's rules need."""

    calls: list[Call]
    assistant_texts: list[tuple[int, str]]
    learner_texts: list[tuple[int, str]]
    last_assistant: int
    """Index of the last assistant message (-1 if none): what comes after is new."""

    def said(self, sentence: str, after: int = -1) -> bool:
        """Whether the tutor already wrote `sentence` in a message after index `after`."""
        return any(sentence in text for i, text in self.assistant_texts if i > after)

    def new_learner_text(self) -> str:
        """The learner's text since the tutor last spoke (notices excluded)."""
        return "\n".join(t for i, t in self.learner_texts if i > self.last_assistant)

    def is_new(self, call: Call) -> bool:
        """Whether `call`'s result arrived after the tutor last spoke."""
        return call.result_index > self.last_assistant


def read_outcome(result: str | None) -> Outcome:
    """Decode a tool result text; "error:" texts and {"error": ...} objects are errors."""
    if result is None:
        return None
    if result.startswith("error:"):
        return "error"
    try:
        return _OUTPUT.decode(result)
    except msgspec.DecodeError:
        pass
    try:
        value = json.loads(result)
    except ValueError:
        return None
    return "error" if isinstance(value, dict) and "error" in value else None


def error_text(result: str | None) -> str:
    """The message of an error result ("error: …" text or {"error": …}), else ""."""
    if result is None:
        return ""
    if result.startswith("error:"):
        return result.removeprefix("error:").strip()
    try:
        value = json.loads(result)
    except ValueError:
        return ""
    error = value.get("error") if isinstance(value, dict) else None
    return error if isinstance(error, str) else json.dumps(error) if error is not None else ""


def _args(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _learner_text(content: str) -> str:
    # Notices (e.g. "a job result was delivered") are server-authored, not the learner's.
    paragraphs = content.split("\n\n")
    return "\n\n".join(p for p in paragraphs if not p.lstrip().startswith(NOTICE_PREFIX)).strip()


def read_transcript(messages: list[ModelMessage]) -> Transcript:
    """Split `messages` into calls (+ results), the tutor's texts and the learner's texts."""
    results: dict[str, str] = {}
    results_at: dict[str, int] = {}
    for i, m in enumerate(messages):
        if m.role == "tool":
            results[m.tool_call_id] = m.content
            results_at[m.tool_call_id] = i
    calls: list[Call] = []
    assistant: list[tuple[int, str]] = []
    learner: list[tuple[int, str]] = []
    last_assistant = -1
    for i, m in enumerate(messages):
        if m.role == "assistant":
            last_assistant = i
            assistant.append((i, m.content))
            calls.extend(
                Call(
                    id=c.id,
                    name=c.name,
                    args=_args(c.arguments),
                    msg_index=i,
                    result=results.get(c.id),
                    result_index=results_at.get(c.id, -1),
                )
                for c in m.tool_calls
            )
        elif m.role == "user":
            text = _learner_text(m.content)
            if text:
                learner.append((i, text))
    return Transcript(
        calls=calls, assistant_texts=assistant, learner_texts=learner, last_assistant=last_assistant
    )
