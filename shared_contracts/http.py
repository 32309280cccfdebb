"""HTTP request and response bodies that are not records themselves."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from shared_contracts.base import Body, Id, Inbound
from shared_contracts.chat import ChatMode


class CreateChat(Inbound, kw_only=True, frozen=True):
    title: Annotated[str, msgspec.Meta(max_length=200)] | None = None
    material_id: Id | None = None
    """Teach from this material (one of the learner's: 404 otherwise)."""
    mode: ChatMode = "lesson"
    """`review`: a review session over the learner's review queue as of now."""


class Health(Body, kw_only=True, frozen=True):
    status: Literal["ok"] = "ok"
    model: str = "offline"
    offline: bool = True
    auth: Literal["local", "accounts"] = "local"
    """`accounts`: every other route needs a signed-in learner's token (the UI signs in)."""


class ErrorBody(Body, kw_only=True, frozen=True):
    status_code: int
    detail: str
    code: str = ""


class ExtractAccepted(Body, kw_only=True, frozen=True):
    chat_id: str
    started: bool
    """False when a run was already in flight and this trigger was coalesced into it."""
    pending_answers: int = 0


class GraphContext(Body, kw_only=True, frozen=True):
    markdown: str
    nodes_total: int
    nodes_shown: int
    tokens_estimate: int
