"""A `StoreFactory` that counts every call on every learner's stores, wrapped around the one
the app opens (`create_app(observe_stores=CountingAtRoot())`): the composition root, not a
patch.

`calls` holds one `StoreCall` per call on a chat, graph, job, trace, material or search
port, with the learner and the arguments; the ownership probes (`owned`) and the account
store pass through uncounted here (they are what is allowed to answer a hostile request),
but the probes are tallied in `probes` for the figures."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from backend.core.ports import AccountStore, OwnedIds, OwnedKind, RateLimits
from backend.server.stores import StoreFactory, Stores

PORTS = ("chats", "graph", "jobs", "traces", "materials", "search")


@dataclass(frozen=True)
class StoreCall:
    learner: str
    port: str
    method: str
    args: tuple[Any, ...]


@dataclass
class CallLog:
    calls: list[StoreCall] = field(default_factory=list)
    probes: list[tuple[str, OwnedKind, str, bool]] = field(default_factory=list)

    def mark(self) -> int:
        return len(self.calls)

    def since(self, mark: int) -> list[StoreCall]:
        return self.calls[mark:]


class _CountingPort:
    """Forwards every attribute of `inner`; a method call is logged before it runs."""

    def __init__(self, inner: Any, learner: str, port: str, log: CallLog) -> None:
        self._inner, self._learner, self._port, self._log = inner, learner, port, log

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._inner, name)
        if not callable(target):
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            self._log.calls.append(StoreCall(self._learner, self._port, name, args))
            return target(*args, **kwargs)

        return call


class _CountedOwnedIds:
    def __init__(self, inner: OwnedIds, learner: str, log: CallLog) -> None:
        self._inner, self._learner, self._log = inner, learner, log

    async def owns(self, kind: OwnedKind, item_id: str) -> bool:
        answer = await self._inner.owns(kind, item_id)
        self._log.probes.append((self._learner, kind, item_id, answer))
        return answer


class CountingStoreFactory:
    """Wraps a real factory (files or PostgreSQL): same data, every store call logged."""

    def __init__(self, inner: StoreFactory, log: CallLog | None = None) -> None:
        self.inner = inner
        self.log = log or CallLog()
        self._stores: dict[str, Stores] = {}

    @property
    def accounts(self) -> AccountStore:
        return self.inner.accounts

    @property
    def rate_limits(self) -> RateLimits:
        return self.inner.rate_limits

    def for_learner(self, learner_id: str) -> Stores:
        stores = self._stores.get(learner_id)
        if stores is None:
            real = self.inner.for_learner(learner_id)
            wrap: Callable[[str], Any] = lambda port: _CountingPort(  # noqa: E731
                getattr(real, port), learner_id, port, self.log
            )
            stores = self._stores[learner_id] = dataclasses.replace(
                real, **{port: wrap(port) for port in PORTS}
            )
        return stores

    def owned(self, learner_id: str) -> OwnedIds:
        return _CountedOwnedIds(self.inner.owned(learner_id), learner_id, self.log)


class CountingAtRoot:
    """`create_app(observe_stores=...)`: wraps whatever factory the app opens (files or
    PostgreSQL) in a `CountingStoreFactory`, kept here for the test to read."""

    def __init__(self) -> None:
        self.log = CallLog()
        self.factory: CountingStoreFactory | None = None

    def __call__(self, inner: StoreFactory) -> StoreFactory:
        self.factory = CountingStoreFactory(inner, self.log)
        return self.factory
