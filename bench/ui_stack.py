"""What the browser rows (B12–B14) run against: the fake OpenAI tutor, `harness serve` on a
data dir of benchmark chats, the Reflex UI (`reflex run --env prod`) and headless Chromium.

One stack serves every browser row of a run (`ui_stack(ctx)` starts it on first use; the
run's exit stack stops it). Each process is stopped by its own pid. The page carries a
`MutationObserver` and capture-phase listeners (`PAGE_PROBE`) that stamp, in the page's
own clock, when the learner sent, when a marked text and a verdict were first drawn, and
when an opened chat's last message was drawn with the composer usable.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil

from bench.context import BenchContext
from bench.procs import ROOT, ServerProc
from bench.ui_data import LAST_MESSAGE, write_ui_chats

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]
UI_START_SECONDS = 300.0  # the first compile in a checkout runs `npm install`

PAGE_PROBE = """
(() => {
  const lh = (window.__lh = {marks: {}, want: {}});
  const now = () => performance.timeOrigin + performance.now();
  const mark = (name) => { if (!(name in lh.marks)) lh.marks[name] = now(); };
  lh.reset = (want) => { lh.marks = {}; lh.want = want || {}; };
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.target && e.target.id === 'composer') mark('send');
  }, true);
  document.addEventListener('click', (e) => {
    if (e.target.closest && e.target.closest('#submit-answer')) mark('answer');
  }, true);
  const has = (node, text) => node && node.textContent && node.textContent.includes(text);
  const composerReady = () => {
    const box = document.getElementById('composer');
    return box && !box.disabled;
  };
  new MutationObserver((records) => {
    for (const r of records) {
      const nodes = r.type === 'childList' ? Array.from(r.addedNodes) : [r.target];
      for (const node of nodes) {
        if (lh.want.text && has(node, lh.want.text)) mark('text');
        if (has(node, '%(last)s')) lh.opened = true;
        if (node.nodeType === 1 && (node.id === 'verdict' || node.querySelector('#verdict')))
          mark('verdict');
      }
    }
    if (lh.opened && !('open' in lh.marks) && composerReady())
      lh.marks.open = performance.now();  // since this page's navigation started
  }).observe(document, {childList: true, subtree: true, characterData: true, attributes: true,
                        attributeFilter: ['disabled']});
})();
""".replace("%(last)s", LAST_MESSAGE)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process `pid` and every descendant alive now."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def _wait_http(url: str, seconds: float, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: process exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} not ready after {seconds:.0f} s: {log.read_text()[-2000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop `proc`'s process group (started in a session of its own), by its pid."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=15)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait(timeout=5)


def api_env(data_dir: Path, port: int, model_url: str) -> dict[str, str]:
    """`harness serve`'s environment: the fake tutor as a litellm model, no extraction."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LH_")}
    env.update(
        LH_DATA_DIR=str(data_dir),
        LH_API_HOST="127.0.0.1",
        LH_API_PORT=str(port),
        LH_MODEL="openai/fake-tutor",
        OPENAI_API_BASE=model_url,
        OPENAI_API_KEY="sk-bench",
        # The graph's extraction would run in the background mid-measurement; not measured.
        LH_EVERY_N_QUIZ_ANSWERS="1000",
    )
    return env


def start_api(data_dir: Path, model_url: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`harness serve` on a free port; (process, base URL) once it answers."""
    port = free_port()
    harness = Path(sys.executable).parent / "harness"
    proc = subprocess.Popen(
        [str(harness), "serve"],
        cwd=ROOT,
        env=api_env(data_dir, port, model_url),
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    _wait_http(f"{url}/healthz", 60, proc, log)
    return proc, url


@dataclass
class UiStack:
    fake: ServerProc
    api: subprocess.Popen[bytes]
    api_url: str
    ui: subprocess.Popen[bytes]
    ui_url: str
    data_dir: Path

    @property
    def ws_url(self) -> str:
        return self.api_url.replace("http://", "ws://")

    def ui_cpu(self) -> float:
        """The UI server's CPU seconds so far (its whole process tree)."""
        return tree_cpu(self.ui.pid)

    def close(self) -> None:
        _stop(self.ui)
        _stop(self.api)
        self.fake.stop()


def ui_stack(ctx: BenchContext) -> UiStack:
    """The run's stack, started on first use (chats of every browser row written first)."""
    stack = ctx.shared.get("ui_stack")
    if stack is None:
        stack = _start(ctx)
        ctx.shared["ui_stack"] = stack
        ctx.on_close(stack.close)
    return stack


def _start(ctx: BenchContext) -> UiStack:
    from backend.cli.ui import start_ui

    log = ctx.workdir / "servers.log"
    data_dir = ctx.scratch("ui-data")
    write_ui_chats(data_dir, ctx.rounds, quick=ctx.quick)
    fake = ServerProc("fakeopenai", log=log)
    try:
        api, api_url = start_api(data_dir, f"http://127.0.0.1:{fake.port}/v1", log)
    except Exception:
        fake.stop()
        raise
    ui_port = free_port()
    ui_log = ctx.workdir / "ui.log"
    ui = start_ui(
        api_url=api_url, ui_port=ui_port, stdout=ui_log.open("ab"), stderr=subprocess.STDOUT
    )
    stack = UiStack(fake, api, api_url, ui, f"http://127.0.0.1:{ui_port}", data_dir)
    try:
        _wait_http(f"{stack.ui_url}/ping", UI_START_SECONDS, ui, ui_log)
    except Exception:
        stack.close()
        raise
    return stack


@asynccontextmanager
async def browser_page() -> AsyncIterator[Any]:
    """A fresh headless Chromium page (1280×800) carrying `PAGE_PROBE`."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(viewport={"width": 1280, "height": 800})
            await context.add_init_script(PAGE_PROBE)
            page = await context.new_page()
            page.set_default_timeout(60_000)
            yield page
        finally:
            await browser.close()


async def clock_offset_ms(page: Any) -> float:
    """The page's wall clock minus ours, in ms (the midpoint of a round trip)."""
    best: tuple[float, float] | None = None
    for _ in range(5):
        before = time.time() * 1000.0
        theirs = await page.evaluate("performance.timeOrigin + performance.now()")
        after = time.time() * 1000.0
        if best is None or after - before < best[0]:
            best = (after - before, theirs - (before + after) / 2.0)
    assert best is not None
    return best[1]
