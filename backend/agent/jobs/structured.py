"""One structured model answer: schema from a msgspec Struct, strict decode, one repair."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

import msgspec

from backend.agent.jobs.errors import UnsafeArtifact
from backend.agent.json_schema import object_schema
from backend.core.errors import ModelError
from backend.core.ports import ChatModel
from shared_contracts.model_io import ModelDone, ModelMessage, ModelRequest, ModelRole

A = TypeVar("A", bound=msgspec.Struct)
R = TypeVar("R")


class Malformed(ValueError):
    """An answer that decodes but breaks a rule the schema cannot express."""


_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*\n(.*)\n\s*```\s*$", re.S)


async def _answer_text(model: ChatModel, request: ModelRequest) -> str:
    async for event in model.stream(request):
        if isinstance(event, ModelDone):
            return event.message.content
    raise ModelError(f"{request.role}: the model stream ended without a final message")


async def ask_structured(
    model: ChatModel,
    *,
    role: ModelRole,
    system: str,
    user: str,
    answer: type[A],
    accept: Callable[[A], R],
) -> R:
    """Ask for one JSON object of type `answer` and return `accept(decoded)`.

    A reply that does not decode strictly, or that `accept` rejects (`Malformed`,
    `UnsafeArtifact`), gets one repair request quoting the error; a second bad reply
    raises `ModelError`. Model errors propagate unchanged.
    """
    decoder = msgspec.json.Decoder(answer)
    messages = [
        ModelMessage(role="system", content=system),
        ModelMessage(role="user", content=user),
    ]
    schema = object_schema(answer)
    problem = ""
    for attempt in range(2):
        text = await _answer_text(
            model, ModelRequest(role=role, messages=messages, response_schema=schema)
        )
        fenced = _FENCE.match(text)
        try:
            return accept(decoder.decode(fenced.group(1) if fenced else text))
        except (msgspec.DecodeError, Malformed, UnsafeArtifact) as exc:
            problem = str(exc)
        if attempt == 0:
            messages = [
                *messages,
                ModelMessage(role="assistant", content=text),
                ModelMessage(
                    role="user",
                    content=f"That answer was rejected: {problem}\n"
                    "Reply again with only one JSON object that follows the schema.",
                ),
            ]
    raise ModelError(f"{role}: malformed answer after one repair: {problem[:300]}")
