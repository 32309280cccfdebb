"""A real uvicorn server on 127.0.0.1:<free port> in a thread, for black-box contract tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn

from backend.server.app import create_app
from backend.server.settings import Settings

START_TIMEOUT_S = 15.0


@dataclass(frozen=True, slots=True)
class LiveServer:
    """Where a started server listens."""

    host: str
    port: int

    @property
    def http(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://{self.host}:{self.port}"


@contextmanager
def live_server(data_dir: Path, model: Any = None, **settings: Any) -> Iterator[LiveServer]:
    """Serve `create_app` (offline tutor unless `model` is given) until the block exits."""
    overrides = {"model": model} if model is not None else {}
    app = create_app(Settings(data_dir=data_dir, api_port=0, **settings), **overrides)
    # log_config=None: records propagate to the root logger, where tests can capture them.
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_config=None, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="contract-api", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the API did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield LiveServer(host="127.0.0.1", port=port)
    finally:
        server.should_exit = True
        thread.join(timeout=START_TIMEOUT_S)
