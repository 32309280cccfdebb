"""How a turn opens: one write that numbers it and takes its input, then its input's frames.

The opening write, all in one: the turn count, the learner's message (a `UserTurn`), and a
notice of the job results that arrived since the teacher last spoke. An `AnswerTurn`
then writes its answer into the question's part and announces the verdict.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from backend.core.answers import find_part
from backend.core.errors import NoPendingQuestion
from backend.core.ports import Clock, IdGen, TurnObserver
from backend.core.record_ops import (
    job_notices,
    undelivered_job_parts,
    update_tool_part,
    upsert_message,
)
from backend.core.views import public_part
from backend.server.turn.inputs import AnswerTurn, TurnInput, UserTurn
from backend.server.turn.seams import TurnSeams
from backend.server.turn.state import OpenTurn
from shared_contracts.chat import (
    UNTITLED,
    ChatRecord,
    Message,
    NoticePart,
    TextPart,
    ToolPart,
    title_from,
)
from shared_contracts.frames import ToolResult, VerdictFrame
from shared_contracts.tools import GradedOutput


class Opening:
    """Builds a turn's opening write and runs its input's first steps."""

    def __init__(self, seams: TurnSeams, clock: Clock, ids: IdGen, observer: TurnObserver):
        self._seams = seams
        self._clock = clock
        self._ids = ids
        self._observer = observer

    async def write(self, chat_id: str, given: TurnInput) -> tuple[ChatRecord, list[NoticePart]]:
        """The opening write: (the record it leaves, the job notices it added)."""
        notices: list[NoticePart] = []
        record = await self._seams.update(chat_id, lambda r: self._open(r, given, notices))
        return record, notices

    def _open(self, record: ChatRecord, given: TurnInput, notices: list[NoticePart]) -> ChatRecord:
        turn_id = record.turns + 1
        now = self._clock.now()
        record = msgspec.structs.replace(record, turns=turn_id, updated_at=now)
        if isinstance(given, UserTurn):
            record = self._with_user_message(record, given.frame.text, turn_id, now)
        parts = undelivered_job_parts(record)
        if parts:
            message = Message(
                id=self._ids.new("msg"),
                role="user",
                turn=turn_id,
                created_at=now,
                parts=list(job_notices(parts)),
            )
            record = upsert_message(record, message, now)
            notices.extend(p for p in message.parts if isinstance(p, NoticePart))
        return record

    def _with_user_message(
        self, record: ChatRecord, text: str, turn_id: int, now: datetime
    ) -> ChatRecord:
        message = Message(
            id=self._ids.new("msg"),
            role="user",
            turn=turn_id,
            created_at=now,
            parts=[TextPart(text=text)],
        )
        updated = upsert_message(record, message, now)
        if record.title == UNTITLED:
            updated = msgspec.structs.replace(updated, title=title_from(text))
        return updated

    async def start(self, turn: OpenTurn, given: TurnInput) -> None:
        """What the input does once the turn is open (its own writes, its frames)."""
        if isinstance(given, AnswerTurn):
            await self._answer(turn, given.answered)

    async def _answer(self, turn: OpenTurn, answered: ToolPart) -> None:
        await self._write_answer(turn.chat_id, answered)
        await self._observer.answer_recorded(turn.chat_id, turn.turn_id, answered)
        if isinstance(answered.output, GradedOutput):
            v = answered.output.verdict
            await turn.sink(
                VerdictFrame(
                    tool_call_id=answered.tool_call_id,
                    correct=v.correct,
                    expected=v.expected,
                    feedback=v.feedback,
                )
            )
        await turn.sink(ToolResult(part=public_part(answered)))

    async def _write_answer(self, chat_id: str, part: ToolPart) -> ChatRecord:
        now = self._clock.now()

        def mutate(record: ChatRecord) -> ChatRecord:
            if find_part(record, part.tool_call_id).state != "input-available":
                raise NoPendingQuestion("that question has already been answered")
            updated = update_tool_part(record, part, now)
            assert updated is not None
            return updated

        return await self._seams.update(chat_id, mutate)
