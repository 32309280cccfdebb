"""The teacher's steps within a turn: read the chat, stream one model call, run its tool
calls, persist, start jobs; until the teacher stops, asks a question, or runs out of steps.

The rules it enforces are the teacher's (`backend.agent.teacher`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from backend.agent.teacher import Teacher
from backend.core.errors import ModelError
from backend.core.ports import TurnObserver
from backend.core.record_ops import upsert_message
from backend.core.views import shown
from backend.turn.material import MaterialDesk
from backend.turn.seams import TurnSeams
from backend.turn.state import FrameSink, OpenTurn
from backend.turn.tools import ToolRunner
from shared_contracts.chat import ChatRecord, TextPart
from shared_contracts.frames import ErrorFrame, TextDelta, TurnFinishReason
from shared_contracts.model_io import ModelDone, TextChunk

log = logging.getLogger("harness.turn")


class TeacherLoop:
    """Runs a turn's teacher steps (at most `max_steps`)."""

    def __init__(
        self,
        seams: TurnSeams,
        observer: TurnObserver,
        *,
        max_steps: int,
        model_label: str,
        desk: MaterialDesk | None = None,
    ) -> None:
        self._seams = seams
        self._observer = observer
        self._tools = ToolRunner(seams, observer, desk)
        self._max_steps = max_steps
        self._model_label = model_label

    async def run(self, turn: OpenTurn, teacher: Teacher) -> TurnFinishReason:
        for _ in range(self._max_steps):
            reason = await self._step(turn, teacher)
            if reason is not None:
                return reason
        await turn.sink(
            ErrorFrame(
                code="step_limit",
                message=f"the teacher took more than {self._max_steps} steps in one turn",
            )
        )
        return "error"

    async def _step(self, turn: OpenTurn, teacher: Teacher) -> TurnFinishReason | None:
        """One step; the turn's end reason, or None when the teacher goes on."""
        await self._observer.step_starting(turn.chat_id, turn.turn_id)
        record = await self._seams.read(turn.chat_id)
        record = upsert_message(record, turn.assistant, record.updated_at)
        done = await self._stream(turn, teacher, record)
        text = done.message.content or "".join(turn.partial)
        turn.partial.clear()
        if text:
            turn.add(TextPart(text=text))
        calls = done.message.tool_calls
        for call in calls:
            await self._tools.run(turn, call)
        saved = await self._seams.persist(turn.chat_id, turn.assistant)
        # the stored copy may be further along (a job already tagged or settled its part)
        turn.assistant = next(m for m in saved.messages if m.id == turn.assistant.id)
        turn.saved = turn.assistant
        await self._seams.spawn_jobs(turn.chat_id, turn.assistant)
        if turn.question_asked:
            return "awaiting_answer"
        if not calls:
            return await self._settle_ending(turn, done.finish_reason)
        return None

    async def _stream(self, turn: OpenTurn, teacher: Teacher, record: ChatRecord) -> ModelDone:
        """Stream one model call's text to the learner; its final message."""
        done: ModelDone | None = None
        # Per streamed chunk: nothing but the delta (the message id is fixed meanwhile).
        keep, sink, message_id = turn.partial.append, turn.sink, turn.assistant.id
        push = _text_pusher(sink, message_id)
        async for event in teacher.stream(record):
            if isinstance(event, TextChunk) and event.text:
                keep(event.text)
                if push is not None:
                    push(event.text)
                else:
                    await sink(TextDelta(message_id=message_id, delta=event.text))
            elif isinstance(event, ModelDone):
                done = event
        if done is None:
            raise ModelError("the model stream ended without a final message")
        return done

    async def _settle_ending(self, turn: OpenTurn, finish_reason: str) -> TurnFinishReason:
        """A last step that ended short, or said nothing at all, is told to the learner in
        a sentence (else a cut answer, or no answer, would look like the tutor's whole say)."""
        who = f"The tutor's model ({self._model_label})"
        notice = ""
        if finish_reason == "length":
            notice = f"{who} hit its length limit, so its answer is cut off. Ask it to go on."
        elif finish_reason == "content_filter":
            notice = f"{who} held back the rest of its answer (the provider's content filter)."
        elif not turn.may_be_silent and not any(shown(p) for p in turn.assistant.parts):
            notice = f"{who} sent an empty reply. Send your message again."
        if not notice:
            return "stop"
        log.warning("[chat %s] the turn ended short: %s", turn.chat_id, finish_reason)
        await turn.sink(ErrorFrame(code="model_error", message=notice))
        return "error"


def _text_pusher(sink: FrameSink, message_id: str) -> Callable[[str], None] | None:
    """The sink's plain per-delta call for `message_id`'s streamed text (the hub's sink
    has one, see `TurnSink.text_deltas`), else None: await the sink with each frame."""
    text_deltas = getattr(sink, "text_deltas", None)
    return text_deltas(message_id) if text_deltas is not None else None
