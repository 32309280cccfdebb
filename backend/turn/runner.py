"""Turns as the app runs them: in its task group (a turn outlives the socket that started
it), frames to the chat's hub, and the finished jobs handed on when the chat is idle."""

from __future__ import annotations

import logging

import anyio
from anyio.abc import TaskGroup

from backend.core.answers import prepare_answer
from backend.core.errors import Busy, HarnessError
from backend.core.pending import pending_question
from backend.core.ports import TurnClaims, TurnObserver
from backend.core.record_ops import undelivered_job_parts
from backend.turn.inputs import AnswerTurn, DeliverTurn, TurnInput, UserTurn
from backend.turn.state import FrameHub, FrameSink
from backend.turn.turns import Turns
from shared_contracts.frames import Answer, ErrorFrame, UserMessage

log = logging.getLogger("harness.server")


class TurnRunner:
    """Starts turns in the app's task group; no turn may take the app down."""

    def __init__(
        self,
        turns: Turns,
        hub: FrameHub,
        task_group: TaskGroup,
        observer: TurnObserver,
        claims: TurnClaims,
    ) -> None:
        self.turns = turns
        self._hub = hub
        self._task_group = task_group
        self._observer = observer
        self._claims = claims

    def is_running(self, chat_id: str) -> bool:
        return self.turns.is_running(chat_id)

    def abort(self, chat_id: str) -> bool:
        """Cancel the chat's running turn (it still finishes and persists); False if none."""
        return self.turns.abort(chat_id)

    async def start_user_message(self, chat_id: str, frame: UserMessage) -> None:
        """Start a turn (raises `Busy` when one is running, here or in another process)."""
        await self._start(chat_id, UserTurn(frame))

    async def start_answer(self, chat_id: str, frame: Answer) -> None:
        """Grade now (errors go to the caller), then continue the lesson in the background."""
        record = await self.turns.seams.read(chat_id)
        await self._start(chat_id, AnswerTurn(prepare_answer(record, frame)))

    async def deliver_jobs(self, chat_id: str) -> bool:
        """Hand finished job results to the teacher when the chat is idle; True if started.

        While a turn runs or a question waits, results stay in their tool parts and are
        delivered after that turn (a turn's end calls this again).
        """
        # Read first, then decide and claim with no await in between: the decision is
        # taken at the read's trace sync point, so a replay makes it as the recording did.
        try:
            record = await self.turns.seams.read(chat_id)
        except Exception as exc:
            log.warning("[chat %s] deliver_jobs could not read the chat: %s", chat_id, exc)
            return False
        if self.turns.is_running(chat_id):
            return False
        parts = undelivered_job_parts(record)
        if not parts or pending_question(record) is not None:
            return False
        try:
            await self._start(chat_id, DeliverTurn())
        except Busy:
            return False
        except HarnessError as exc:
            log.warning("[chat %s] deliver_jobs could not claim the chat: %s", chat_id, exc)
            return False
        return True

    async def _start(self, chat_id: str, given: TurnInput) -> None:
        """Claim the chat here (no await between check and insert), then in the database
        for the other processes (none: a call that takes no scheduling point)."""
        scope = self.turns.claim(chat_id)
        try:
            claimed = await self._claims.claim(chat_id)
        except BaseException:
            self.turns.release(chat_id, scope)
            raise
        if not claimed:
            self.turns.release(chat_id, scope)
            raise Busy("a turn is already running for this chat")
        self._task_group.start_soon(self._turn, chat_id, scope, given)

    async def _turn(self, chat_id: str, scope: anyio.CancelScope, given: TurnInput) -> None:
        """No turn may take the app down: an escaping error is logged and reported. The
        database claim is released once the turn's last write is done."""
        sink = self._hub.sink(chat_id)
        try:
            reason = await self.turns.run(chat_id, given, sink, scope)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception:
            log.exception("[chat %s] turn crashed", chat_id)
            self.turns.release(chat_id, scope)
            await _release_claim_quietly(self._claims, chat_id)
            await _send_quietly(sink, ErrorFrame(code="internal", message="the turn failed"))
            return
        await _release_claim_quietly(self._claims, chat_id)
        await self._observer.flush(chat_id)
        if reason in ("stop", "error", "aborted"):
            await self.deliver_jobs(chat_id)


async def _release_claim_quietly(claims: TurnClaims, chat_id: str) -> None:
    try:
        await claims.release(chat_id)
    except HarnessError as exc:  # a lost connection has released it already
        log.warning("[chat %s] the turn's claim was not released: %s", chat_id, exc)


async def _send_quietly(sink: FrameSink, frame: ErrorFrame) -> None:
    try:
        await sink(frame)
    except Exception:
        log.debug("could not report a crashed turn")
