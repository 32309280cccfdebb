"""Server-executed teacher tools, bound to one chat (`create_teacher_tools`).

Plan tools apply to the chat's persisted plan tree through the chat store, so the tree is
never held anywhere but the record.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from backend.core.plan_tree import apply_plan_tool
from backend.core.ports import ChatStore
from shared_contracts.chat import ChatRecord
from shared_contracts.plan import PlanTree
from shared_contracts.tools import (
    PlanAddArgs,
    PlanInitArgs,
    PlanMarkDoneArgs,
    PlanUpdateArgs,
)

PlanArgs = PlanInitArgs | PlanAddArgs | PlanUpdateArgs | PlanMarkDoneArgs


@dataclass(frozen=True, slots=True)
class PlanChange:
    before: PlanTree | None
    after: PlanTree


class TeacherTools:
    """Executes plan tools for one chat; a plan error raises `PlanError` and writes nothing."""

    def __init__(self, chat_id: str, chats: ChatStore) -> None:
        self.chat_id = chat_id
        self.chats = chats

    async def apply_plan(self, args: PlanArgs) -> PlanChange:
        seen: list[PlanTree | None] = []

        def mutate(record: ChatRecord) -> ChatRecord:
            seen.append(record.plan)
            tree = apply_plan_tool(record.plan, args)
            return msgspec.structs.replace(record, plan=tree)

        record = await self.chats.update(self.chat_id, mutate)
        assert record.plan is not None
        return PlanChange(before=seen[-1], after=record.plan)


def create_teacher_tools(chat_id: str, chats: ChatStore) -> TeacherTools:
    return TeacherTools(chat_id, chats)
