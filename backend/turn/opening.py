"""How a turn opens: one write that numbers it and takes its input (`core.turn_records`),
then its input's frames: an `AnswerTurn` writes its answer into the question's part and
announces the verdict."""

from __future__ import annotations

from backend.core.ports import Clock, IdGen, TurnObserver
from backend.core.turn_records import answered, opened
from backend.core.views import public_part
from backend.turn.inputs import AnswerTurn, TurnInput, UserTurn
from backend.turn.seams import TurnSeams
from backend.turn.state import OpenTurn
from shared_contracts.chat import ChatRecord, NoticePart, ToolPart
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
        """The opening write (`core.turn_records.opened`): (the record it leaves, the job
        notices it added)."""
        notices: list[NoticePart] = []
        text = given.frame.text if isinstance(given, UserTurn) else None
        clock, ids = self._clock, self._ids
        record = await self._seams.update(chat_id, lambda r: opened(r, text, clock, ids, notices))
        return record, notices

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
        return await self._seams.update(chat_id, lambda r: answered(r, part, now))
