"""Every learner's services, one set per learner: chats, turns, jobs, the graph's channels,
the recorder — each over that learner's own stores only.

`LH_AUTH=local` has one learner, whose services open with the app exactly as before.
With accounts, a learner's services open on their first request (in a task of their own
under the app's task group, so they close, flushing their trace, when the app stops) and
stay open while the app runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus

from backend.core.ports import OwnedIds
from backend.server.services import Services, open_services
from backend.server.settings import Settings
from backend.server.stores import (
    LOCAL_LEARNER,
    CoordinationFactory,
    StoreFactory,
    open_coordination_factory,
    open_store_factory,
)


@dataclass(frozen=True)
class Learner:
    """One learner's services, and (with accounts) the ids that are theirs."""

    id: str
    services: Services
    owned: OwnedIds | None
    """None for the local learner: everything in the data dir is theirs."""


class Learners:
    """Hands out a learner's `Learner`, opening it on first use."""

    def __init__(
        self,
        settings: Settings,
        factory: StoreFactory | None,
        task_group: TaskGroup | None,
        overrides: dict[str, Any],
        local: Services | None = None,
        coordination: CoordinationFactory | None = None,
    ) -> None:
        self.settings = settings
        self.factory = factory
        self._coordination = coordination
        self._task_group = task_group
        self._overrides = overrides
        self._open: dict[str, Learner] = {}
        self._opening = anyio.Lock()
        self.local = local
        if local is not None:
            self._open[LOCAL_LEARNER] = Learner(LOCAL_LEARNER, local, None)

    def __len__(self) -> int:
        return len(self._open)

    async def get(self, learner_id: str) -> Learner:
        found = self._open.get(learner_id)
        if found is not None:
            return found
        if self.factory is None or self._task_group is None:
            raise LookupError(f"learner {learner_id!r} has no services here")
        async with self._opening:  # two first requests of one learner open it once
            found = self._open.get(learner_id)
            if found is None:
                services: Services = await self._task_group.start(self._host, learner_id)
                found = Learner(learner_id, services, self.factory.owned(learner_id))
                self._open[learner_id] = found
        return found

    async def _host(self, learner_id: str, *, task_status: TaskStatus[Services]) -> None:
        assert self.factory is not None and self._coordination is not None
        stores = self.factory.for_learner(learner_id)
        coordination = self._coordination.for_learner(learner_id)
        async with open_services(
            self.settings, stores=stores, coordination=coordination, **self._overrides
        ) as services:
            task_status.started(services)
            await anyio.sleep_forever()


@asynccontextmanager
async def open_learners(
    settings: Settings,
    *,
    observe_stores: Callable[[StoreFactory], StoreFactory] | None = None,
    **overrides: Any,
) -> AsyncIterator[Learners]:
    """The app's learners for the block: the local learner's services opened now
    (`LH_AUTH=local`; `overrides` as `open_services` takes them), or every account's
    opened as they come, over the settings' data dir or database — as `observe_stores`
    wraps it, when given (tests count every store call there)."""
    if settings.auth == "local":
        async with open_services(settings, **overrides) as services:
            yield Learners(settings, None, None, overrides, local=services)
        return
    async with AsyncExitStack() as stack:
        factory = await stack.enter_async_context(
            open_store_factory(settings.data_dir, settings.database_url)
        )
        if observe_stores is not None:
            factory = observe_stores(factory)
        # one lock session and one listener for every learner this process serves
        coordination = await stack.enter_async_context(
            open_coordination_factory(settings.database_url)
        )
        async with anyio.create_task_group() as task_group:
            try:
                yield Learners(settings, factory, task_group, overrides, coordination=coordination)
            finally:
                task_group.cancel_scope.cancel()  # each learner's services close, flushed
