"""The chat record as the model sees it: one deterministic conversion (replay hashes it).

The model sees the most recent messages that fit `HISTORY_CHARS`, starting at a learner
message, and a note saying how many earlier ones it does not see (the plan tree and the
graph context carry what they taught). A long chat therefore neither overflows a model's
context nor makes every step cost more than the last.
"""

from __future__ import annotations

import msgspec

from shared_contracts.chat import ChatRecord, Message, NoticePart, TextPart, ToolPart
from shared_contracts.model_io import ModelMessage, ModelToolCall

_ENCODE = msgspec.json.Encoder(order="sorted")

JOB_RUNNING_NOTE = (
    "started in the background (job {job_id}); its result will be delivered to you when it"
    " is ready. Carry on teaching meanwhile."
)


def tool_result_text(part: ToolPart) -> str:
    """What the model reads as the output of one tool call."""
    if part.state == "output-error":
        return f"error: {part.error}"
    if part.output is not None:
        return _ENCODE.encode(part.output).decode()
    if part.job_id is not None:
        return JOB_RUNNING_NOTE.format(job_id=part.job_id)
    return "error: no result (the call was interrupted)"


def _assistant_messages(message: Message) -> list[ModelMessage]:
    """Split an assistant message at text-after-tool boundaries into model messages."""
    out: list[ModelMessage] = []
    text: list[str] = []
    calls: list[ToolPart] = []

    def flush() -> None:
        if not text and not calls:
            return
        out.append(
            ModelMessage(
                role="assistant",
                content="".join(text),
                tool_calls=[
                    ModelToolCall(
                        id=part.tool_call_id,
                        name=part.tool_name,
                        arguments=_ENCODE.encode(part.input).decode(),
                    )
                    for part in calls
                ],
            )
        )
        out.extend(
            ModelMessage(
                role="tool", tool_call_id=part.tool_call_id, content=tool_result_text(part)
            )
            for part in calls
        )
        text.clear()
        calls.clear()

    for part in message.parts:
        if isinstance(part, TextPart):
            if calls:
                flush()
            text.append(part.text)
        elif isinstance(part, ToolPart):
            calls.append(part)
    flush()
    return out


def _user_message(message: Message) -> ModelMessage | None:
    texts = []
    for part in message.parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, NoticePart):
            texts.append(f"[notice] {part.text}")
    if not texts:
        return None
    return ModelMessage(role="user", content="\n\n".join(texts))


HISTORY_CHARS = 72_000
"""About 24k tokens (at the conservative chars/3 of the graph context) of past messages."""

ELIDED_NOTE = (
    "[notice] The {count} earliest messages of this chat are not shown (only the most recent"
    " ones fit). The plan tree and the learner's knowledge graph carry what they covered."
)


def to_model_messages(
    record: ChatRecord, system_prompt: str, history_chars: int = HISTORY_CHARS
) -> list[ModelMessage]:
    """System prompt, then the transcript's recent window in order (see the module); every
    tool call gets its tool message. The last turn is always shown, whatever its size."""
    window: list[list[ModelMessage]] = []
    size = 0
    start = len(record.messages)
    for index in range(len(record.messages) - 1, -1, -1):
        converted = _convert(record.messages[index])
        size += sum(_chars(m) for m in converted)
        if size > history_chars and _turn_start(window):
            break  # the window begins at a learner message: never mid-turn
        window.append(converted)
        start = index
    out = [ModelMessage(role="system", content=system_prompt)]
    if start > 0:
        out.append(ModelMessage(role="user", content=ELIDED_NOTE.format(count=start)))
    for converted in reversed(window):
        out.extend(converted)
    return out


def _convert(message: Message) -> list[ModelMessage]:
    if message.role == "assistant":
        return _assistant_messages(message)
    user = _user_message(message)
    return [user] if user is not None else []


def _chars(message: ModelMessage) -> int:
    return len(message.content) + sum(len(c.arguments) + len(c.name) for c in message.tool_calls)


def _turn_start(window: list[list[ModelMessage]]) -> bool:
    """Whether the window (built newest first) now begins with a learner's message."""
    return bool(window) and bool(window[-1]) and window[-1][0].role == "user"
