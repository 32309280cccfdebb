"""The plan tree: the teacher's visible map of what this session teaches."""

from __future__ import annotations

from typing import Literal

import msgspec

from shared_contracts.base import Id, Record
from shared_contracts.materials import Passage

PlanStatus = Literal["pending", "active", "done"]


class PlanNode(Record, kw_only=True, frozen=True):
    id: Id
    title: str
    summary: str = ""
    parent: Id | None = None
    status: PlanStatus = "pending"
    done_note: str = ""
    passages: list[Passage] | msgspec.UnsetType = msgspec.UNSET
    """The document passages this node teaches (a lesson from a document), each checked
    verbatim against the stored text. Unset (and not written) when there are none, so a
    plan without a document encodes as before."""


class PlanTree(Record, kw_only=True, frozen=True):
    goal: str
    nodes: list[PlanNode] = msgspec.field(default_factory=list)
    current: Id | None = None
    version: int = 0
