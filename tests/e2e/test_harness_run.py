"""`harness run` (what `make run` starts): API + UI come up with no warning on the screen,
and SIGTERM stops both."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import ROOT, UI_START_SECONDS, free_port

pytestmark = pytest.mark.browser


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _wait_ok(url: str, proc: subprocess.Popen, seconds: float, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"harness run exited early:\n{log.read_text()[-3000:]}"
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"{url} not ready after {seconds}s:\n{log.read_text()[-3000:]}")


def test_harness_run_serves_api_and_ui_and_stops_cleanly(tmp_path: Path) -> None:
    api_port, ui_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LH_")}
    env.update(
        LH_DATA_DIR=str(tmp_path / "data"), LH_API_PORT=str(api_port), LH_UI_PORT=str(ui_port)
    )
    log = tmp_path / "run.log"
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "harness"), "run"],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        _wait_ok(f"http://127.0.0.1:{api_port}/healthz", proc, 30, log)
        _wait_ok(f"http://127.0.0.1:{ui_port}/", proc, UI_START_SECONDS, log)
        first_screen = log.read_text()
        assert f"UI http://127.0.0.1:{ui_port}" in first_screen
        # A newcomer's first screen carries no warning (Reflex printed "Page ... is being
        # redefined" three times while the pages registered on every compile).
        assert "Warning" not in first_screen, first_screen
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 15
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _group_alive(proc.pid), "API processes survived SIGTERM"
        # the UI runs in a process group of its own: nothing may still serve its port
        while _listening(ui_port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _listening(ui_port), "the UI survived SIGTERM"
        print(f"\nharness run stopped in {time.monotonic() - started:.1f}s")
    finally:
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
