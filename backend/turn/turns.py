"""Turns, one at a time per chat: open, run the teacher's steps, finish — framework-free.

A turn's frames go to a sink (the hub's, or a list in tests). Every finish persists what
the learner saw, aborts and errors included; an error becomes one `error` frame (mapped
once, in `backend.turn.errors`) and the turn still finishes; the seams never break it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import anyio

from backend.agent.teacher import create_teacher
from backend.core.errors import Busy, HarnessError
from backend.core.ports import ChatModel, Clock, IdGen, TurnObserver
from backend.core.record_ops import upsert_message
from backend.core.views import WHOLE, Page, chat_mode, chat_view
from backend.turn.errors import error_frame, turn_error_frame
from backend.turn.inputs import DeliverTurn, TurnInput
from backend.turn.loop import TeacherLoop
from backend.turn.material import MaterialDesk, attached_id
from backend.turn.opening import Opening
from backend.turn.seams import ContextRequest, TurnSeams
from backend.turn.state import FrameSink, OpenTurn
from shared_contracts.chat import ChatView, Message, NoticePart
from shared_contracts.frames import ServerFrame, TurnFinished, TurnFinishReason, TurnStarted

log = logging.getLogger("harness.turn")


@dataclass(frozen=True)
class TurnConfig:
    max_steps: int = 12
    offline: bool = True
    model_label: str = "offline"
    template: str | None = None
    """A teacher prompt template to use instead of the packaged one (replay experiments)."""


class Turns:
    """Runs turns: one at a time per chat; every finish persists; seams never break a turn."""

    def __init__(
        self,
        *,
        model: ChatModel,
        clock: Clock,
        ids: IdGen,
        seams: TurnSeams,
        observer: TurnObserver,
        config: TurnConfig | None = None,
        desk: MaterialDesk | None = None,
    ) -> None:
        self.config = config or TurnConfig()
        self.seams = seams
        self._model = model
        self._clock = clock
        self._ids = ids
        self._observer = observer
        self._desk = desk
        self._opening = Opening(seams, clock, ids, observer)
        self._loop = TeacherLoop(
            seams,
            observer,
            max_steps=self.config.max_steps,
            model_label=self.config.model_label,
            desk=desk,
        )
        self._running: dict[str, anyio.CancelScope] = {}
        self._turns: dict[str, OpenTurn] = {}  # the running turn of each chat, once opened

    # -- the chat's turn slot ---------------------------------------------------------

    def claim(self, chat_id: str) -> anyio.CancelScope:
        """Reserve the chat for a turn (synchronously: no await between check and insert)."""
        if chat_id in self._running:
            raise Busy("a turn is already running for this chat")
        scope = anyio.CancelScope()
        self._running[chat_id] = scope
        return scope

    def release(self, chat_id: str, scope: anyio.CancelScope) -> None:
        if self._running.get(chat_id) is scope:
            del self._running[chat_id]

    def is_running(self, chat_id: str) -> bool:
        return chat_id in self._running

    def abort(self, chat_id: str) -> bool:
        scope = self._running.get(chat_id)
        if scope is None:
            return False
        scope.cancel()
        return True

    def live_view(self, chat_id: str, page: Page = WHOLE) -> ChatView | None:
        """The chat as a socket opening now must see it, with no I/O and no await: its
        record as of the last completed write, with the running turn's message so far (its
        streamed text included); None when the record is not in memory. Taken in the same
        step as the socket's hub connection, the snapshot holds every `text_delta` sent
        before it and the connection every one after."""
        record = self.seams.peek(chat_id)
        if record is None:
            return None
        turn = self._turns.get(chat_id)
        if turn is not None:
            message = turn.message_so_far()
            if message.parts:
                record = upsert_message(record, message, record.updated_at)
        return chat_view(
            record,
            offline=self.config.offline,
            turn_running=self.is_running(chat_id),
            page=page,
        )

    # -- a turn -----------------------------------------------------------------------

    async def run(
        self, chat_id: str, given: TurnInput, sink: FrameSink, scope: anyio.CancelScope
    ) -> TurnFinishReason:
        """Run a claimed turn (see `claim`) to its finish. The chat stays pinned in the
        store's cache while it runs: a turn reads its record a dozen times, and decoding it
        each time cost more than the rest of the turn once chats grew long."""
        async with self.seams.pinned(chat_id):
            turn, reason = await self._run_pinned(chat_id, given, sink, scope)
        if turn is not None:
            await self.seams.trigger_extraction(chat_id)
        return reason

    async def _run_pinned(
        self, chat_id: str, given: TurnInput, sink: FrameSink, scope: anyio.CancelScope
    ) -> tuple[OpenTurn | None, TurnFinishReason]:
        reason: TurnFinishReason = "error"
        turn: OpenTurn | None = None
        try:
            await self._observer.turn_opening(chat_id)
            # Opening a turn (its number, the learner's input) is not abortable: an abort
            # that arrives this early still finds the input saved and gets a turn_finished.
            with anyio.CancelScope(shield=True):
                turn, notices = await self._open(chat_id, given, sink)
                await self._started(turn, notices, given)
            assert turn is not None  # a shielded scope swallows nothing
            with scope:
                reason = await self._teach(turn)
            if scope.cancelled_caught:
                reason = "aborted"
        except Exception as exc:
            reason = "error"
            await _safe_send(sink, turn_error_frame(exc, chat_id))
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    if turn is not None:
                        await self._finish(turn, reason)
                finally:
                    if turn is not None and self._turns.get(chat_id) is turn:
                        del self._turns[chat_id]
                    self.release(chat_id, scope)
        return turn, reason

    async def _open(
        self, chat_id: str, given: TurnInput, sink: FrameSink
    ) -> tuple[OpenTurn, list[NoticePart]]:
        """The opening write, and the turn it opens (registered as the chat's running one)."""
        record, notices = await self._opening.write(chat_id, given)
        turn = OpenTurn(
            chat_id=chat_id,
            turn_id=record.turns,
            sink=sink,
            assistant=Message(
                id=self._ids.new("msg"),
                role="assistant",
                turn=record.turns,
                created_at=self._clock.now(),
            ),
            may_be_silent=isinstance(given, DeliverTurn),
            mode=chat_mode(record),
            material_id=attached_id(record),
        )
        self._turns[chat_id] = turn
        return turn, notices

    async def _started(self, turn: OpenTurn, notices: list[NoticePart], given: TurnInput) -> None:
        await turn.sink(TurnStarted(turn_id=turn.turn_id))
        if notices:
            await self._observer.jobs_delivered(turn.chat_id, turn.turn_id, notices)
        await self._opening.start(turn, given)

    async def _teach(self, turn: OpenTurn) -> TurnFinishReason:
        at = turn.assistant.created_at
        request = ContextRequest(turn.chat_id, at, turn.mode)
        context = await self.seams.build_teacher_context(request)
        material = ""
        if self._desk is not None:
            with anyio.CancelScope(shield=True):  # an abort lands after it, as for the graph's
                material = await self._desk.context(turn.chat_id, turn.material_id)
        teacher = create_teacher(self._model, context, self.config.template, material)
        await self._observer.prompt_rendered(turn.chat_id, turn.turn_id, teacher.prompt)
        return await self._loop.run(turn, teacher)

    async def _finish(self, turn: OpenTurn, reason: TurnFinishReason) -> None:
        """Every finish persists what the learner saw, aborts and errors included."""
        turn.keep_partial()
        if turn.assistant.parts and turn.assistant is not turn.saved:
            try:
                await self.seams.persist(turn.chat_id, turn.assistant)
            except HarnessError as exc:
                reason = "error"
                log.warning("[chat %s] could not persist the turn: %s", turn.chat_id, exc)
                await _safe_send(turn.sink, error_frame(exc))
        await self._observer.turn_closed(turn.chat_id, turn.turn_id)
        await _safe_send(turn.sink, TurnFinished(turn_id=turn.turn_id, reason=reason))


async def _safe_send(sink: FrameSink, frame: ServerFrame) -> None:
    try:
        await sink(frame)
    except Exception:  # a closed socket must not hide the finish
        log.debug("sink refused %s", type(frame).__name__)
