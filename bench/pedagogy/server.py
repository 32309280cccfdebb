"""A real `harness serve` for one simulated learner: offline tutor, its own temp data dir,
a free loopback port, and simulated time through `LH_CLOCK_FILE` (the bench writes the
simulated now into that file; the server's `FileClock` reads it). Stopped by its pid."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from datetime import datetime
from pathlib import Path

READY = re.compile(r"harness API on (http://127\.0\.0\.1:\d+)")
START_SECONDS = 60.0
STOP_SECONDS = 10.0


class ServerError(RuntimeError):
    """The server did not start; the message carries the tail of its log."""


class HarnessServer:
    """`with HarnessServer(root, at) as server:` — `server.http`, `server.ws`, `server.now(at)`."""

    def __init__(self, root: Path, at: datetime, settings: dict[str, str] | None = None) -> None:
        """`settings`: more `LH_*` settings for the server (e.g. `LH_DESIRED_RETENTION`)."""
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.settings = dict(settings or {})
        self.clock_file = root / "now"
        self.log_path = root / "server.log"
        self.now(at)
        self.process: subprocess.Popen[str] | None = None
        self.http = ""

    @property
    def ws(self) -> str:
        return self.http.replace("http://", "ws://", 1)

    def now(self, at: datetime) -> None:
        """Move the server's clock to `at` (it then runs on in real time from there)."""
        temp = self.clock_file.with_suffix(".tmp")
        temp.write_text(at.isoformat())
        temp.replace(self.clock_file)

    def __enter__(self) -> HarnessServer:
        env = {k: v for k, v in os.environ.items() if not k.startswith("LH_")}
        env.update(
            LH_DATA_DIR=str(self.root / "data"),
            LH_API_HOST="127.0.0.1",
            LH_API_PORT="0",
            LH_CLOCK_FILE=str(self.clock_file),
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            LITELLM_LOG="ERROR",
        )
        env.update(self.settings)
        log = self.log_path.open("w")
        # cwd = the temp root: a developer's `.env` (a model key, LH_MODEL) is not read.
        self.process = subprocess.Popen(
            [sys.executable, "-m", "backend.cli", "serve"],
            cwd=self.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            start_new_session=True,
        )
        log.close()
        self.http = self._wait_ready()
        self._wait_healthy()
        return self

    def _wait_healthy(self) -> None:
        """The address is printed once the port is bound; serving starts a moment later."""
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.http}/healthz", timeout=5) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise ServerError(
            f"harness serve never answered /healthz:\n{self.log_path.read_text()[-2000:]}"
        )

    def _wait_ready(self) -> str:
        assert self.process is not None and self.process.stdout is not None
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line and self.process.poll() is not None:
                break
            found = READY.search(line)
            if found:
                # Keep reading what it prints, so a full pipe never blocks the server.
                threading.Thread(target=self.process.stdout.read, daemon=True).start()
                return found.group(1)
        self.stop()
        tail = self.log_path.read_text()[-2000:]
        raise ServerError(f"harness serve did not start in {self.root}:\n{tail}")

    def stop(self) -> None:
        """SIGTERM to our own server's pid, then SIGKILL if it lingers."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(STOP_SECONDS)

    def __exit__(self, *exc: object) -> None:
        self.stop()
