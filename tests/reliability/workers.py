"""Helpers for the multi-worker tests: API workers on one throwaway database, frames read
until one of a type arrives, chat records read back from the database, `harness verify`
of the database, and the SIGKILL rounds."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import psycopg

from shared_contracts.chat import ChatRecord
from tests.reliability.disk_check import lost_turns_in

__all__ = ["lost_turns_in"]
from tests.reliability.learner import Learner, LearnerStats, drive, new_chat
from tests.reliability.server_proc import HARNESS, ServerProcess, harness_env

WORKER = "tests.reliability.worker_server"
RECORD = msgspec.json.Decoder(ChatRecord)
KILL_ENV = {"LH_TEST_CHUNK_S": "0.005"}
"""Turns of about half a second: a kill lands mid-turn, after some turns were acknowledged."""


def start_worker(data_dir: Path, url: str, **env: str) -> ServerProcess:
    """One API worker process on the database at `url` (its own port)."""
    return ServerProcess(data_dir, {"LH_DATABASE_URL": url, **env}, module=WORKER).start()


def chat_ws(server: ServerProcess, chat_id: str) -> str:
    return f"{server.ws_url}/api/chats/{chat_id}/ws"


async def until(ws, kind: str, within: float = 15.0) -> list[dict]:
    """Frames read until one of type `kind` (it is the last one returned)."""
    seen: list[dict] = []
    deadline = time.monotonic() + within
    while True:
        try:
            raw = await asyncio.wait_for(ws.recv(), max(0.01, deadline - time.monotonic()))
        except TimeoutError:
            raise AssertionError(f"no {kind} frame within {within} s; got {seen}") from None
        seen.append(json.loads(raw))
        if seen[-1]["type"] == kind:
            return seen


def load_chat(url: str, chat_id: str, learner: str = "local") -> ChatRecord | None:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT record::text FROM chats WHERE learner_id = %s AND id = %s", (learner, chat_id)
        ).fetchone()
    return RECORD.decode(row[0]) if row else None


def verify_database(data_dir: Path, url: str) -> tuple[int, str]:
    """`harness verify` of the database: (exit code, output)."""
    done = subprocess.run(
        [HARNESS, "verify"],
        env=harness_env(data_dir, LH_DATABASE_URL=url),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stdout + done.stderr


@dataclass
class KillReport:
    rounds: int = 0
    stats: LearnerStats = field(default_factory=LearnerStats)
    taken_over: int = 0
    """Rounds in which the other worker ran the killed worker's chat's next turn."""
    busy_after_kill: int = 0
    lost: list[str] = field(default_factory=list)
    verify: list[str] = field(default_factory=list)


async def _round(a: ServerProcess, b: ServerProcess, chats: list[str], rng, report) -> None:
    """Learners on both workers; `a` killed mid-turn; its chat's next turn on `b`."""
    on_a = asyncio.create_task(drive(a.ws_url, chats[0], random.Random(rng.random()), report.stats))
    on_b = asyncio.create_task(
        drive(b.ws_url, chats[1], random.Random(rng.random()), report.stats, until=_later(1.5))
    )
    await asyncio.sleep(rng.uniform(0.05, 0.6))
    a.kill()
    await asyncio.wait_for(on_a, 15)
    before = len(report.stats.acked)
    errors = len(report.stats.errors)
    learner = Learner(b.ws_url, chats[0], random.Random(rng.random()), report.stats)
    await asyncio.wait_for(learner.run(turns=1), 15)
    report.taken_over += len(report.stats.acked) > before
    report.busy_after_kill += sum(e["code"] == "busy" for e in report.stats.errors[errors:])
    await asyncio.wait_for(on_b, 15)


def _later(seconds: float) -> float:
    return time.monotonic() + seconds


def kill_rounds(data_dir: Path, url: str, rounds: int, seed: int) -> KillReport:
    """`rounds` times: two workers serve learners, one is SIGKILLed mid-turn and started
    again; then every acknowledged turn must be in the database and `verify` clean."""
    rng = random.Random(seed)
    report = KillReport()
    b = start_worker(data_dir, url, **KILL_ENV)
    a = None
    try:
        chats = [new_chat(b.url, "killed worker's chat"), new_chat(b.url, "other worker's chat")]
        for _ in range(rounds):
            a = start_worker(data_dir, url, **KILL_ENV)
            asyncio.run(_round(a, b, chats, rng, report))
            report.rounds += 1
    finally:
        if a is not None:
            a.kill()
        b.kill()
    report.lost = lost_turns_in(lambda chat_id: load_chat(url, chat_id), report.stats.acked)
    code, output = verify_database(data_dir, url)
    if code != 0:
        report.verify.append(output.strip()[-1500:])
    return report
