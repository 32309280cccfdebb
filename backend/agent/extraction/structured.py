"""One structured-output model call: a msgspec Struct's schema out, a strict decode back."""

from __future__ import annotations

from typing import TypeVar

import msgspec

from backend.agent.json_schema import object_schema
from backend.core.errors import ModelError
from backend.core.ports import ChatModel
from shared_contracts.model_io import ModelDone, ModelMessage, ModelRequest, ModelRole

T = TypeVar("T")


def build_request(
    role: ModelRole, system: str, user: str, answer: type[msgspec.Struct]
) -> ModelRequest:
    """A request whose answer must be one JSON object of `answer`'s schema."""
    return ModelRequest(
        role=role,
        messages=[
            ModelMessage(role="system", content=system),
            ModelMessage(role="user", content=user),
        ],
        response_schema=object_schema(answer),
        temperature=0.0,
    )


async def call_structured(model: ChatModel, request: ModelRequest, answer: type[T]) -> T:
    """Run `request` and decode the final message strictly; ModelError when malformed."""
    done: ModelDone | None = None
    async for event in model.stream(request):
        if isinstance(event, ModelDone):
            done = event
    if done is None:
        raise ModelError(f"{request.role}: the model stream ended without a final message")
    if done.finish_reason != "stop":
        raise ModelError(f"{request.role}: the answer stopped early ({done.finish_reason})")
    try:
        return msgspec.json.decode(_strip_fence(done.message.content), type=answer)
    except msgspec.DecodeError as exc:
        raise ModelError(f"{request.role}: malformed structured answer: {exc}") from None


def _strip_fence(text: str) -> str:
    # Some providers wrap JSON mode answers in a ``` fence; the content inside is decoded
    # strictly all the same.
    body = text.strip()
    if body.startswith("```") and body.endswith("```"):
        body = body[3:-3]
        body = body[body.find("\n") + 1 :] if "\n" in body else body
    return body
