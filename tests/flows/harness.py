"""A turn harness for flow tests: the real turns on fakes, frames into a list."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

import msgspec

from backend.core.answers import prepare_answer
from backend.core.ports import ChatModel, MaterialStore, SearchPort, TurnObserver
from backend.tracing.tracer import NO_TRACE
from backend.turn.chats import ChatService
from backend.turn.inputs import AnswerTurn, UserTurn
from backend.turn.material import MaterialDesk
from backend.turn.seams import TurnSeams
from backend.turn.turns import TurnConfig, Turns
from shared_contracts.frames import Answer, ServerFrame, UserMessage
from tests.fakes import FixedClock, MemoryChatStore, SequentialIds

ENCODER = msgspec.json.Encoder()


@dataclass
class FlowHarness:
    model: ChatModel
    chats: MemoryChatStore = field(default_factory=MemoryChatStore)
    clock: FixedClock = field(default_factory=FixedClock)
    ids: SequentialIds = field(default_factory=SequentialIds)
    frames: list[ServerFrame] = field(default_factory=list)
    max_steps: int = 12
    seams: TurnSeams | None = None
    observer: TurnObserver = NO_TRACE
    materials: MaterialStore | None = None
    """The learner's documents (a store that is also its `SearchPort`), if any."""

    def __post_init__(self) -> None:
        self.seams = self.seams or TurnSeams(self.chats, self.clock)
        desk = None
        if self.materials is not None:
            desk = MaterialDesk(self.materials, cast(SearchPort, self.materials))
        self.turns = Turns(
            model=self.model,
            clock=self.clock,
            ids=self.ids,
            seams=self.seams,
            observer=self.observer,
            config=TurnConfig(max_steps=self.max_steps),
            desk=desk,
        )
        self.chat_service = ChatService(
            self.chats, self.clock, self.ids, self.observer, self.turns, self.materials
        )

    async def sink(self, frame: ServerFrame) -> None:
        self.frames.append(frame)

    async def new_chat(self, material_id: str | None = None) -> str:
        return (await self.chat_service.create(material_id=material_id)).id

    async def say(self, chat_id: str, text: str) -> str:
        scope = self.turns.claim(chat_id)
        return await self.turns.run(chat_id, UserTurn(UserMessage(text=text)), self.sink, scope)

    async def answer(self, chat_id: str, tool_call_id: str, answer, confidence=None) -> str:
        frame = Answer(tool_call_id=tool_call_id, answer=answer, confidence=confidence)
        answered = prepare_answer(await self.chats.get(chat_id), frame)
        scope = self.turns.claim(chat_id)
        return await self.turns.run(chat_id, AnswerTurn(answered), self.sink, scope)

    def of_type(self, kind: type) -> list:
        return [f for f in self.frames if isinstance(f, kind)]

    def wire(self) -> str:
        """Everything sent so far, as the client received it."""
        return "\n".join(ENCODER.encode(f).decode() for f in self.frames)
