"""A real `harness serve` child process on a free loopback port, killed and restarted by pid."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

HARNESS = str(Path(sys.executable).with_name("harness"))


def harness_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment for a loopback server (offline tutor, port 0) on `data_dir`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LH_")}
    env.update(
        LH_DATA_DIR=str(data_dir),
        LH_API_HOST="127.0.0.1",
        LH_API_PORT="0",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        LITELLM_LOG="ERROR",
    )
    env.update(extra)
    return env


def run_verify(data_dir: Path) -> tuple[int, str]:
    """`harness verify` as a command: (exit code, output)."""
    done = subprocess.run(
        [HARNESS, "verify"], env=harness_env(data_dir), capture_output=True, text=True, timeout=60
    )
    return done.returncode, done.stdout + done.stderr


@dataclass
class ServerProcess:
    """One `harness serve`; `start` waits for /healthz, `kill` is SIGKILL by pid. With
    `crash_at` (`op[@path]:n`), the same server with a crashing `FileOps` injected
    (`crash_server`): it dies at that file operation."""

    data_dir: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    crash_at: str = ""
    module: str = ""
    """A module to run instead of `harness serve` (`python -m module`), e.g. a test worker."""
    proc: subprocess.Popen | None = None
    url: str = ""
    log_path: Path | None = None

    def start(self, timeout: float = 30.0) -> ServerProcess:
        self.log_path = self.data_dir.parent / f"server-{time.monotonic_ns()}.log"
        log = self.log_path.open("w")
        command = [HARNESS, "serve"]
        if self.crash_at:
            command = [sys.executable, "-m", "tests.reliability.crash_server", self.crash_at]
        if self.module:
            command = [sys.executable, "-m", self.module]
        self.proc = subprocess.Popen(
            command,
            env=harness_env(self.data_dir, **self.extra_env),
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        log.close()
        assert self.proc.stdout is not None
        banner = self.proc.stdout.readline()  # "harness API on http://127.0.0.1:PORT (...)"
        if "http://" not in banner:
            self.kill()
            raise RuntimeError(f"harness serve did not start: {banner!r} {self.stderr()[-2000:]}")
        self.url = banner.split()[3]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"harness serve exited: {self.stderr()[-2000:]}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.02)
        self.kill()
        raise RuntimeError("harness serve did not answer /healthz in time")

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://", 1)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> int | None:
        """SIGKILL (if still running) and reap; the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        code = self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return code

    def wait_exit(self, timeout: float) -> int | None:
        """The exit code if the process ends within `timeout`, else None."""
        assert self.proc is not None
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stderr(self) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")

    def rss_kb(self) -> int:
        """VmRSS of the server from /proc."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def fd_count(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))
