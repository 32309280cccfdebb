"""The app's recorder: a `Tracer` over the app's stores, and the stores as it records them."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from backend.server.models import role_config
from backend.server.settings import Settings
from backend.server.stores import Stores
from backend.tracing.tracer import Tracer


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
