"""The chat record as the model sees it: one deterministic conversion (replay hashes it)."""

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


def to_model_messages(record: ChatRecord, system_prompt: str) -> list[ModelMessage]:
    """System prompt, then the transcript in order; every tool call gets its tool message."""
    out = [ModelMessage(role="system", content=system_prompt)]
    for message in record.messages:
        if message.role == "assistant":
            out.extend(_assistant_messages(message))
        else:
            user = _user_message(message)
            if user is not None:
                out.append(user)
    return out
