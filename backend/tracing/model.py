"""A `ChatModel` that records every call under its structural key (`turn:7/teacher#0`,
`job:<id>/researcher#2`, `extraction:<run>/extractor#0`); in a replay it answers from the
recording (strict: a different request is a divergence)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import anyio
import msgspec

from backend.core.errors import ModelError
from backend.core.ports import ChatModel
from backend.tracing.hashing import request_hash
from backend.tracing.player import Player, replay_events, was_cancelled
from backend.tracing.recorder import Recorder
from backend.tracing.units import Scope, Units, current_scope
from shared_contracts.model_io import ModelDone, ModelEvent, ModelRequest, TextChunk, ToolCallChunk
from shared_contracts.trace import ModelCallEvent, TimedChunk
from shared_contracts.trace_blobs import text_chunks


class TracingModel:
    """Records each call's request, stream and outcome, queued with its unit's events."""

    def __init__(
        self,
        inner: ChatModel,
        recorder: Recorder,
        units: Units,
        player: Player | None,
        timer: Callable[[], float],
    ) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "model")
        self._recorder = recorder
        self._units = units
        self._player = player
        self._timer = timer

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        scope = current_scope()
        if scope is None:
            async for event in self.inner.stream(request):
                yield event
            return
        key = f"{scope.key}/{request.role}#{self._units.count(scope, 'call:' + request.role)}"
        call = ModelCallEvent(
            seq=0,
            scope=scope.key,
            key=key,
            model=self.name,
            request=request,
            request_hash=request_hash(request),
        )
        player = self._player
        if player is not None and not player.live(scope.key):
            async for event in self._replayed(player, scope, key, request):
                yield event
            return
        async for event in self._recorded(scope, call, request):
            yield event

    async def _replayed(
        self, player: Player, scope: Scope, key: str, request: ModelRequest
    ) -> AsyncIterator[ModelEvent]:
        await player.stop(scope.key, call=key)  # a recorded shutdown stopped it before
        recorded = player.call(key, request)  # raises ReplayDivergence
        self._recorder.emit(scope.chat_id, msgspec.structs.replace(recorded, scope=scope.key))
        for event in replay_events(recorded):
            yield event
        if was_cancelled(recorded):
            # Recorded: cancelled while waiting for the next chunk. The replay holds the
            # call there until the cancellation (the replayed abort) lands.
            await player.cut(key)
        if recorded.error:
            raise ModelError(recorded.error)

    async def _recorded(
        self, scope: Scope, call: ModelCallEvent, request: ModelRequest
    ) -> AsyncIterator[ModelEvent]:
        stream = _StreamRecord(call, self._timer)
        timer, stamp, keep = self._timer, stream.stamps.append, stream.texts.append
        try:
            async for event in self.inner.stream(request):
                if isinstance(event, TextChunk):
                    if stream.chunks is None:  # per chunk, as plain as it gets
                        stamp(timer())
                        keep(event.text)
                    else:
                        stream.text(event)
                elif isinstance(event, ToolCallChunk):
                    stream.tool_call(event)
                elif isinstance(event, ModelDone):
                    stream.done(event)
                    # Recorded now, not when the stream is closed: a caller that stops at
                    # the final message leaves it open until garbage collection, and its
                    # unit's next call would be recorded first (a replay records in order).
                    self._emit_once(scope, stream)
                yield event
        except anyio.get_cancelled_exc_class():
            stream.call = msgspec.structs.replace(stream.call, cancelled=True)
            raise
        except Exception as exc:
            error = str(exc)[:2000] or type(exc).__name__
            stream.call = msgspec.structs.replace(stream.call, error=error)
            raise
        finally:
            self._emit_once(scope, stream)  # queued with the unit's other events

    def _emit_once(self, scope: Scope, stream: _StreamRecord) -> None:
        if not stream.emitted:
            stream.emitted = True
            self._recorder.emit(scope.chat_id, stream.finished())


class _StreamRecord:
    """One call's stream as it is recorded. A text-only stream is kept as two lists
    (`text_chunks`), not a Struct per chunk; the first tool-call chunk switches to
    `TimedChunk`s. A text chunk keeps the raw timer reading; whole microseconds since
    `start` (then ms) are taken at the end."""

    __slots__ = ("call", "chunks", "emitted", "keep", "stamp", "stamps", "start", "texts", "timer")

    def __init__(self, call: ModelCallEvent, timer: Callable[[], float]) -> None:
        self.call = call
        self.timer = timer
        self.start = timer()
        self.stamps: list[float] = []
        self.texts: list[str] = []
        self.chunks: list[TimedChunk] | None = None
        self.emitted = False

    def _ms(self) -> float:
        return round((self.timer() - self.start) * 1e6) / 1000

    def text(self, event: TextChunk) -> None:
        if self.chunks is None:
            self.stamps.append(self.timer())
            self.texts.append(event.text)
        else:
            self.chunks.append(TimedChunk(t_ms=self._ms(), text=event.text))

    def tool_call(self, event: ToolCallChunk) -> None:
        if self.chunks is None:
            pairs = zip(_ms_since(self.start, self.stamps), self.texts, strict=True)
            self.chunks = [TimedChunk(t_ms=ms, text=x) for ms, x in pairs]
        self.chunks.append(
            TimedChunk(
                t_ms=self._ms(),
                tool_index=event.index,
                tool_id=event.id,
                tool_name=event.name,
                arguments=event.arguments,
            )
        )

    def done(self, event: ModelDone) -> None:
        self.call = msgspec.structs.replace(
            self.call,
            response=event.message,
            finish_reason=event.finish_reason,
            usage=event.usage,
        )

    def finished(self) -> ModelCallEvent:
        """The call event with its stream, as far as it went."""
        if self.chunks is None:
            return text_chunks(self.call, _ms_since(self.start, self.stamps), self.texts)
        return msgspec.structs.replace(self.call, chunks=self.chunks)


def _ms_since(start: float, stamps: list[float]) -> list[float]:
    """Timer readings as ms since `start`, in whole microseconds."""
    return [round((t - start) * 1e6) / 1000 for t in stamps]
