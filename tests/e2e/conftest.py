"""Browser-test launcher: `harness serve` + the Reflex prod UI on free loopback ports.

One API and one compiled UI serve the whole session; each test gets a fresh Chromium
(Debian's, driven by Playwright's async API). A missing browser fails with the install
command: browser tests never skip.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from backend.cli.ui import start_ui
from tests.e2e.hostile import write_hostile_chat

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
UI_START_SECONDS = 240  # the first compile runs `npm install`
API_START_SECONDS = 90
"""An API on a litellm model imports and warms litellm before it answers: ~3 s on an idle
machine, ~20 s at a load average of 12 (the machine is shared)."""


@dataclass
class Servers:
    api_url: str
    ui_url: str
    data_dir: Path
    start_api: Callable[..., subprocess.Popen]
    api: subprocess.Popen

    def stop_api(self) -> None:
        """Stop the API (by its pid); the UI stays up and its sockets drop."""
        _stop(self.api)

    def start_api_again(self, **settings: str) -> None:
        """Start the API again on the same port and data (with `settings` on top of the
        first start's), once it answers. One Reflex UI per checkout: a test that needs
        another API configuration restarts this one rather than launching a second UI."""
        self.api = self.start_api(**settings)
        wait = API_START_SECONDS
        _wait_http(f"{self.api_url}/healthz", wait, self.api, self.data_dir.parent / "api.log")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_http(url: str, seconds: float, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{url} process exited early:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"{url} not ready after {seconds}s:\n{log.read_text()[-3000:]}")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


FIRST = ("test_harness_run.py", "test_bench_browser.py")
"""Tests that compile the UI into this checkout's `.web` with ports of their own (`harness
run`, the browser benchmark rows): they run before the session's UI is built, whose
server reads those files from disk (built after it, they would point its pages at a
socket nobody serves)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.path.name not in FIRST)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).exists() else None)
    if path is None:
        pytest.fail(
            "browser tests need Debian's chromium: apt-get update && apt-get install -y chromium"
        )
    return path


@contextmanager
def launch(base: Path, **settings: str) -> Iterator[Servers]:
    """`harness serve` on `base / "data"` with `settings` (LH_* and provider variables on
    top of the environment's non-LH ones), and a Reflex UI pointed at it; stopped by pid."""
    data_dir = base / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LH_")}
    api_port, ui_port = free_port(), free_port()
    env.update(LH_DATA_DIR=str(data_dir), LH_API_HOST="127.0.0.1", LH_API_PORT=str(api_port))
    env.update(settings)
    api_log = base / "api.log"
    harness = Path(sys.executable).parent / "harness"

    def start_api(**more: str) -> subprocess.Popen:
        return subprocess.Popen(
            [str(harness), "serve"],
            cwd=ROOT,
            env={**env, **more},
            stdout=api_log.open("a"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    api_url = f"http://127.0.0.1:{api_port}"
    ui_log = base / "ui.log"
    ui = None
    servers = Servers(api_url, "", data_dir, start_api, start_api())
    try:
        _wait_http(f"{api_url}/healthz", API_START_SECONDS, servers.api, api_log)
        ui = start_ui(
            api_url=api_url, ui_port=ui_port, stdout=ui_log.open("w"), stderr=subprocess.STDOUT
        )
        servers.ui_url = f"http://127.0.0.1:{ui_port}"
        _wait_http(f"{servers.ui_url}/ping", UI_START_SECONDS, ui, ui_log)
        yield servers
    finally:
        if ui is not None:
            _stop(ui)
        _stop(servers.api)


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """The offline tutor's API and UI, shared by the session's browser tests."""
    base = tmp_path_factory.mktemp("e2e")
    write_hostile_chat(base / "data")
    with launch(base) as servers:
        yield servers


@pytest.fixture
def own_data(servers: Servers, tmp_path: Path) -> Iterator[Servers]:
    """The session's API on a data dir of its own for one test (the others expect theirs
    as it was: `test_lesson` starts from an empty home); the shared one again after."""
    servers.stop_api()
    servers.start_api_again(LH_DATA_DIR=str(tmp_path / "data"))
    try:
        yield servers
    finally:
        servers.stop_api()
        servers.start_api_again()


@pytest.fixture
async def page(chromium_path: str):
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        context = await browser.new_context(viewport={"width": 1280, "height": 800})
        page = await context.new_page()
        page.set_default_timeout(30_000)
        try:
            yield page
        finally:
            await browser.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
