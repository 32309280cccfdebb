"""A chat as a listing shows it: built from a record in one place (`chat_summary`)."""

from __future__ import annotations

from collections.abc import Sized
from datetime import datetime
from typing import Protocol

import msgspec

from shared_contracts.chat import ChatMode, ChatSummary


class SummaryFields(Protocol):
    """What a chat summary is made of: a `ChatRecord`, or just its top-level fields."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def updated_at(self) -> datetime: ...
    @property
    def model(self) -> str: ...
    @property
    def turns(self) -> int: ...
    @property
    def messages(self) -> Sized: ...
    @property
    def material_id(self) -> str | msgspec.UnsetType: ...
    @property
    def mode(self) -> ChatMode | msgspec.UnsetType: ...


def chat_summary(record: SummaryFields) -> ChatSummary:
    """The chat as a listing shows it (the one place a `ChatSummary` is built)."""
    return ChatSummary(
        id=record.id,
        title=record.title,
        created_at=record.created_at,
        updated_at=record.updated_at,
        model=record.model,
        turns=record.turns,
        messages=len(record.messages),
        material_id=record.material_id,
        mode="lesson" if isinstance(record.mode, msgspec.UnsetType) else record.mode,
    )
