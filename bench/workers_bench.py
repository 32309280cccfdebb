"""B11 (issue 22): several API workers on PostgreSQL.

200 learners, each on a chat of its own, take offline-tutor lessons as fast as the server
answers (an answer to each question, else a new message) for 60 s against
`harness serve` as a user runs it:

- subject: `harness serve --workers 2` on PostgreSQL (a throwaway cluster that fsyncs,
  `tests/pg_cluster.PgCluster(durable=True)`, on this machine);
- floor 1: one worker on the same database (a fresh database of the same cluster);
- floor 2: one worker on the file store (durable JSON files).

Figures: turns per second (acknowledged turns: `turn_finished` seen) and the p99 turn
latency (sending the learner's frame → `turn_finished`). 0 lost: after each run every
acknowledged turn's messages are read back from the server. One round (the machine is
shared: note the load average), servers and client unpinned.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx
import msgspec

from bench.context import BenchContext
from bench.harness import Check, Result, percentile
from bench.wsclient import open_ws, run_async

LEARNERS = 200
SECONDS = 60.0
MS = 1000.0
HARNESS = str(Path(sys.executable).with_name("harness"))
ANSWERS = ("denominator", "chlorophyll", "append", "I am not sure")


@dataclass
class Run:
    label: str
    acked: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    lost: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)
    seen: dict[str, list[set[str]]] = field(default_factory=dict)
    """Per chat, the message ids of each acknowledged turn."""

    @property
    def turns_per_s(self) -> float:
        return self.acked / self.seconds if self.seconds else 0.0


class Frame(msgspec.Struct):
    type: str
    message_id: str = ""
    code: str = ""
    tool_call_id: str = ""
    question: dict[str, object] = msgspec.field(default_factory=dict)
    chat: dict[str, object] = msgspec.field(default_factory=dict)


FRAME = msgspec.json.Decoder(Frame)


def _answer(question: dict[str, object], n: int) -> object:
    if question.get("kind") == "multiple_choice":
        options = question.get("options") or [{"id": "a"}]
        return options[n % len(options)]["id"]  # type: ignore[index]
    if question.get("kind") == "numeric":
        return float(n % 7)
    return ANSWERS[n % len(ANSWERS)]


async def _learner(ws_url: str, chat: str, stop_at: float, run: Run) -> None:
    ws = await open_ws(f"{ws_url}/api/chats/{chat}/ws")
    pending: tuple[str, dict[str, object]] | None = None
    first = FRAME.decode(await ws.recv())
    question = first.chat.get("pending_question")
    if isinstance(question, dict):
        pending = (str(question["tool_call_id"]), question["question"])  # type: ignore[arg-type]
    turns = run.seen.setdefault(chat, [])
    ids: set[str] = set()
    n = 0

    async def act() -> float:
        nonlocal pending, n
        n += 1
        if pending is not None:
            call, q = pending
            frame = {"type": "answer", "tool_call_id": call, "answer": _answer(q, n)}
        else:
            frame = {"type": "user_message", "text": "teach me fractions"}
        pending = None
        await ws.send(msgspec.json.encode(frame).decode())
        return time.perf_counter()

    try:
        sent = await act()
        while time.monotonic() < stop_at:
            with anyio.move_on_after(max(0.0, stop_at - time.monotonic())):
                raw = await ws.recv()
            if time.monotonic() >= stop_at:
                break
            frame = FRAME.decode(raw)
            if frame.message_id:
                ids.add(frame.message_id)
            elif frame.type == "question":
                pending = (frame.tool_call_id, frame.question)
            elif frame.type == "error":
                run.errors[frame.code] = run.errors.get(frame.code, 0) + 1
                await anyio.sleep(0.05)
                sent = await act()
            elif frame.type == "turn_finished":
                run.latencies.append((time.perf_counter() - sent) * MS)
                run.acked += 1
                turns.append(ids)
                ids = set()
                sent = await act()
    finally:
        await ws.close()


async def _drive(http: str, chats: list[str], seconds: float, run: Run) -> None:
    ws_url = http.replace("http://", "ws://", 1)
    stop_at = time.monotonic() + seconds
    async with anyio.create_task_group() as tg:
        for chat in chats:
            tg.start_soon(_learner, ws_url, chat, stop_at, run)
    run.seconds = seconds  # turns are counted up to `stop_at` (closing 200 sockets is not)


async def _chats(http: str, count: int) -> list[str]:
    async with httpx.AsyncClient(base_url=http, timeout=60) as client:
        ids = []
        for index in range(count):
            response = await client.post("/api/chats", json={"title": f"learner {index}"})
            response.raise_for_status()
            ids.append(response.json()["id"])
        return ids


async def _lost(http: str, run: Run) -> int:
    """Acknowledged turns whose messages the server does not have."""
    lost = 0
    async with httpx.AsyncClient(base_url=http, timeout=60) as client:
        for chat, turns in run.seen.items():
            view = (await client.get(f"/api/chats/{chat}")).json()
            stored = {m["id"] for m in view["messages"]}
            lost += sum(not ids <= stored for ids in turns)
    return lost


class Server:
    """`harness serve` in its own process group, stopped by its pid."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self._log = log.open("a")
        self.proc = subprocess.Popen(
            [HARNESS, "serve"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        banner = self.proc.stdout.readline()
        if "http://" not in banner:
            self.stop()
            raise RuntimeError(f"harness serve did not start: {banner!r} (see {log})")
        self.http = banner.split()[3]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.http}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"harness serve did not answer /healthz (see {log})")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._log.close()


def _env(data_dir: Path, workers: int, database_url: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LH_")}
    env.update(
        LH_DATA_DIR=str(data_dir),
        LH_API_HOST="127.0.0.1",
        LH_API_PORT="0",
        LH_WORKERS=str(workers),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        LITELLM_LOG="ERROR",
    )
    if database_url:
        env["LH_DATABASE_URL"] = database_url
    return env


def _measure(ctx: BenchContext, label: str, workers: int, url: str | None) -> Run:
    learners = 10 if ctx.quick else LEARNERS
    seconds = 2.0 if ctx.quick else SECONDS
    data = ctx.scratch(f"b11-{label.replace(' ', '-').replace(',', '')}")
    server = Server(_env(data, workers, url), ctx.workdir / "b11-servers.log")
    run = Run(label)
    try:
        chats = run_async(lambda: _chats(server.http, learners))
        run.load = os.getloadavg()
        run_async(lambda: _drive(server.http, chats, seconds, run))  # type: ignore[arg-type]
        run.lost = run_async(lambda: _lost(server.http, run))  # type: ignore[assignment]
    finally:
        server.stop()
    return run


def bench_b11(ctx: BenchContext) -> list[Result]:
    from tests.pg_cluster import PgCluster

    cluster = PgCluster(durable=True).start()
    ctx.on_close(cluster.remove)
    files = _measure(ctx, "files, 1 worker", 1, None)
    one = _measure(ctx, "PostgreSQL, 1 worker", 1, cluster.create_database())
    two = _measure(ctx, "PostgreSQL, 2 workers", 2, cluster.create_database())
    runs = (files, one, two)
    extra = {
        r.label: {
            "turns": r.acked,
            "seconds": round(r.seconds, 1),
            "turns_per_s": round(r.turns_per_s, 1),
            "p50_ms": round(percentile(r.latencies, 50), 1),
            "p99_ms": round(percentile(r.latencies, 99), 1),
            "lost": r.lost,
            "errors": r.errors,
            "load_average": r.load,
        }
        for r in runs
    }
    lost = float(sum(r.lost for r in runs))
    learners = 10 if ctx.quick else LEARNERS
    rows = []
    for floor in (one, files):
        result = Result(
            id="B11" if floor is one else "B11-files",
            what=f"2 workers × {learners} learners on PostgreSQL: turns/s",
            unit="turns/s",
            floor_label=floor.label,
            floor=[floor.turns_per_s],
            subject=[two.turns_per_s],
            subject_samples=[two.turns_per_s],
            goal="0 lost acknowledged turns (throughput and p99: information)",
            extra=extra,
        )
        result.checks = [Check("lost acknowledged turns", lost, 0.0)]
        result.note = (
            f"p99 turn latency {percentile(two.latencies, 99):.0f} ms vs"
            f" {percentile(floor.latencies, 99):.0f} ms"
            f" ({percentile(two.latencies, 99) / max(percentile(floor.latencies, 99), 1e-9):.2f}×);"
            f" load average {two.load[0]:.1f} / {floor.load[0]:.1f}"
        )
        rows.append(result)
    return rows
