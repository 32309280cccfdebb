"""App-lifetime services: built once in the lifespan from settings (tests override by keyword)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskGroup

from backend.core.errors import HarnessError
from backend.core.ports import ChatModel, Clock, IdGen
from backend.server.chat_handler import ChatHandler, FrameSink, HandlerConfig
from backend.server.hub import ChatHub
from backend.server.models import build_teacher_model
from backend.server.runtime import RandomIds, SystemClock
from backend.server.settings import Settings
from backend.server.stores import Stores, build_stores
from backend.server.turn_service import TurnSeams
from shared_contracts.frames import Answer, ErrorFrame, UserMessage

log = logging.getLogger("harness.server")


@dataclass
class Services:
    settings: Settings
    stores: Stores
    hub: ChatHub
    handler: ChatHandler
    task_group: TaskGroup
    clock: Clock
    ids: IdGen
    turns_started: int = 0
    errors: list[str] = field(default_factory=list)

    def start_user_message(self, chat_id: str, frame: UserMessage) -> None:
        """Start a turn in the app's task group (it outlives the socket). Raises Busy."""
        scope = self.handler.claim(chat_id)
        sink = self.hub.sink(chat_id)
        self.task_group.start_soon(self._guarded, chat_id, sink, scope, "user", frame)

    async def start_answer(self, chat_id: str, frame: Answer) -> None:
        answered = await self.handler.prepare_answer(chat_id, frame)
        scope = self.handler.claim(chat_id)
        sink = self.hub.sink(chat_id)
        self.task_group.start_soon(self._guarded, chat_id, sink, scope, "answer", answered)

    async def _guarded(self, chat_id: str, sink: FrameSink, scope, kind: str, payload) -> None:
        """No turn may take the app down: an escaping error is logged and reported."""
        self.turns_started += 1
        try:
            if kind == "user":
                await self.handler.user_message(chat_id, payload, sink, scope)
            else:
                await self.handler.answer(chat_id, payload, sink, scope)
        except anyio.get_cancelled_exc_class():
            raise
        except HarnessError as exc:
            await sink(ErrorFrame(code="internal", message=str(exc)[:300]))
        except Exception:
            log.exception("[chat %s] turn crashed", chat_id)
            self.handler.release(chat_id, scope)
            await sink(ErrorFrame(code="internal", message="the turn failed"))


@asynccontextmanager
async def open_services(
    settings: Settings,
    *,
    model: ChatModel | None = None,
    clock: Clock | None = None,
    ids: IdGen | None = None,
    stores: Stores | None = None,
) -> AsyncIterator[Services]:
    clock = clock or SystemClock()
    ids = ids or RandomIds()
    stores = stores or build_stores(settings.data_dir)
    model = model or build_teacher_model(settings)
    hub = ChatHub()
    async with anyio.create_task_group() as task_group:
        seams = TurnSeams(chats=stores.chats, clock=clock)
        handler = ChatHandler(
            chats=stores.chats,
            model=model,
            clock=clock,
            ids=ids,
            seams=seams,
            config=HandlerConfig(
                max_steps=settings.max_steps,
                offline=settings.offline,
                model_label=settings.model_label,
            ),
        )
        services = Services(
            settings=settings,
            stores=stores,
            hub=hub,
            handler=handler,
            task_group=task_group,
            clock=clock,
            ids=ids,
        )
        try:
            yield services
        finally:
            task_group.cancel_scope.cancel()
