"""The parent's side of `bench.serve`: start a server process, ask it for CPU and RSS, stop it.

Each server runs in its own session (process group) and is stopped by its own pid: first
`quit` on its stdin, then SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT = 60.0


class ServerProc:
    """One benchmark server (`kind` as in `bench.serve`); a context manager."""

    def __init__(self, kind: str, *args: str, cpu: int | None = None, log: Path | None = None):
        command = [sys.executable, "-m", "bench.serve", kind, *args]
        if cpu is not None:
            command += ["--cpu", str(cpu)]
        self.kind = kind
        self._log = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen(
            command,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        first = self._read(START_TIMEOUT)
        if not first.startswith("READY "):
            self.stop()
            raise RuntimeError(f"bench server {kind} did not start: {first!r}")
        self.port = int(first.split()[1])

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line.strip())
        self._lines.put(None)

    def _read(self, timeout: float = 30.0) -> str:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise RuntimeError(f"bench server {self.kind} did not answer") from None
        if line is None:
            raise RuntimeError(f"bench server {self.kind} exited (code {self.proc.poll()})")
        return line

    def _ask(self, command: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._read()

    def cpu(self) -> float:
        """The server process's CPU seconds so far (user + system, every thread)."""
        return float(self._ask("cpu"))

    def rss(self) -> int:
        """The server's resident bytes after a collection."""
        return int(self._ask("rss"))

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Stop this server (and only it) by its pid."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGTERM)
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait(timeout=5)
        if self._log is not subprocess.DEVNULL:
            self._log.close()

    def __enter__(self) -> ServerProc:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def pin_self(cpu: int | None) -> set[int] | None:
    """Pin this process to `cpu` (None: leave it); returns the previous affinity."""
    if cpu is None:
        return None
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    return before


def unpin_self(before: set[int] | None) -> None:
    if before is not None:
        os.sched_setaffinity(0, before)
