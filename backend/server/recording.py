"""The app's recorder: a `Tracer` over the app's stores, the stores as it records them, and
the traces as they are stored (what an export holds)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from backend.core.ports import TraceStore
from backend.server.models import role_config
from backend.server.settings import Settings
from backend.server.stores import Stores
from backend.tracing.ports import ExpandedTraces
from backend.tracing.tracer import Tracer
from shared_contracts.trace import AnyTraceEvent


def recording_tracer(
    stores: Stores, settings: Settings, *, timer: Callable[[], float] = time.perf_counter
) -> Tracer:
    """The production recorder over the app's stores; its `config` names each role's model."""
    return Tracer(
        stores.traces, stores.chats, stores.graph, config=role_config(settings), timer=timer
    )


def recorded_stores(tracer: Tracer, stores: Stores) -> Stores:
    """The app's stores with chat and graph access recorded (when recording) and traces
    read with full text (the trace route shows whole requests); the others as they are."""
    return dataclasses.replace(
        stores,
        chats=tracer.chat_store(stores.chats),
        graph=tracer.graph_store(stores.graph),
        jobs=tracer.job_store(stores.jobs),
        traces=tracer.trace_reader(stores.traces),
    )


class StoredTraces:
    """The app's traces read as they are stored (texts interned), as the archive holds them,
    so an archive taken from a running server is the one `harness export` writes."""

    def __init__(self, traces: ExpandedTraces) -> None:
        self._traces = traces

    async def append(self, chat_id: str, events: list[AnyTraceEvent]) -> None:
        await self._traces.append(chat_id, events)

    async def read(self, chat_id: str) -> list[AnyTraceEvent]:
        return await self._traces.read_stored(chat_id)


def stored_traces(stores: Stores) -> Stores:
    """`stores` with traces read as stored (the app's recorded stores expand them)."""
    traces: TraceStore = stores.traces
    if isinstance(traces, ExpandedTraces):
        traces = StoredTraces(traces)
    return dataclasses.replace(stores, traces=traces)
