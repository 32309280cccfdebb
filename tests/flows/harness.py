"""A turn harness for flow tests: the real ChatHandler on fakes, frames into a list."""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from backend.core.ports import ChatModel
from backend.server.chat_handler import ChatHandler, HandlerConfig
from backend.server.turn_service import TurnSeams
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

    def __post_init__(self) -> None:
        self.seams = self.seams or TurnSeams(chats=self.chats, clock=self.clock)
        self.handler = ChatHandler(
            chats=self.chats,
            model=self.model,
            clock=self.clock,
            ids=self.ids,
            seams=self.seams,
            config=HandlerConfig(max_steps=self.max_steps),
        )

    async def sink(self, frame: ServerFrame) -> None:
        self.frames.append(frame)

    async def new_chat(self) -> str:
        return (await self.handler.create_chat()).id

    async def say(self, chat_id: str, text: str) -> str:
        scope = self.handler.claim(chat_id)
        return await self.handler.user_message(chat_id, UserMessage(text=text), self.sink, scope)

    async def answer(self, chat_id: str, tool_call_id: str, answer, confidence=None) -> str:
        frame = Answer(tool_call_id=tool_call_id, answer=answer, confidence=confidence)
        answered = await self.handler.prepare_answer(chat_id, frame)
        scope = self.handler.claim(chat_id)
        return await self.handler.answer(chat_id, answered, self.sink, scope)

    def of_type(self, kind: type) -> list:
        return [f for f in self.frames if isinstance(f, kind)]

    def wire(self) -> str:
        """Everything sent so far, as the client received it."""
        return "\n".join(ENCODER.encode(f).decode() for f in self.frames)
