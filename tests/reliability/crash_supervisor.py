"""The crash supervisor: drive offline-tutor turns on a real server, SIGKILL it, restart,
verify the data dir and check every acknowledged turn is on disk."""

from __future__ import annotations

import asyncio
import os
import random
import signal
from dataclasses import dataclass, field
from pathlib import Path

from tests.reliability.disk_check import lost_turns
from tests.reliability.learner import Learner, LearnerStats, drive, new_chat
from tests.reliability.server_proc import ServerProcess, run_verify


@dataclass
class CrashReport:
    cycles: int = 0
    acked_turns: int = 0
    lost: list[str] = field(default_factory=list)
    verify_failures: list[str] = field(default_factory=list)
    kill_delays: list[float] = field(default_factory=list)
    chats: list[str] = field(default_factory=list)
    stats: LearnerStats = field(default_factory=LearnerStats)
    self_exits: list[int | None] = field(default_factory=list)


def check_after_restart(data_dir: Path, report: CrashReport, label: str) -> None:
    """`harness verify` must exit 0 and every acknowledged turn must be on disk."""
    code, output = run_verify(data_dir)
    if code != 0:
        report.verify_failures.append(f"{label}: exit {code}: {output.strip()[-1500:]}")
    report.lost += [f"{label}: {line}" for line in lost_turns(data_dir, report.stats.acked)]


async def _drive_then_kill(server: ServerProcess, chats: list[str], rng, stats, delay) -> None:
    tasks = [
        asyncio.create_task(drive(server.ws_url, chat, random.Random(rng.random()), stats))
        for chat in chats
    ]
    await asyncio.sleep(delay)
    os.kill(server.pid, signal.SIGKILL)
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=15)


def random_kills(data_dir: Path, cycles: int, seed: int, max_delay: float = 0.5) -> CrashReport:
    """`cycles` restarts, each killed at a seeded random moment while turns run."""
    rng = random.Random(seed)
    report = CrashReport()
    for cycle in range(cycles):
        server = ServerProcess(data_dir).start()
        if cycle:
            check_after_restart(data_dir, report, f"cycle {cycle}")
        if not report.chats or rng.random() < 0.25:
            report.chats.append(new_chat(server.url))
        active = rng.sample(report.chats, k=min(len(report.chats), rng.choice((1, 2))))
        delay = rng.uniform(0.02, max_delay)
        report.kill_delays.append(delay)
        asyncio.run(_drive_then_kill(server, active, rng, report.stats, delay))
        server.kill()
        report.cycles += 1
    server = ServerProcess(data_dir).start()
    check_after_restart(data_dir, report, "final")
    server.kill()
    report.acked_turns = len(report.stats.acked)
    return report


async def _drive_until_exit(server: ServerProcess, chat: str, stats, seed: int, limit: float):
    task = asyncio.create_task(drive(server.ws_url, chat, random.Random(seed), stats))
    loop = asyncio.get_running_loop()
    code = await loop.run_in_executor(None, server.wait_exit, limit)
    if code is None:
        os.kill(server.pid, signal.SIGKILL)
    await asyncio.wait_for(task, timeout=15)
    return code


def crash_at(data_dir: Path, point: str, seed: int, extra_env: dict[str, str]) -> CrashReport:
    """Run a server that crashes at `point` until it dies there, restart, check, and
    prove the restarted server still completes a turn."""
    report = CrashReport()
    server = ServerProcess(data_dir, extra_env, crash_at=point).start()
    chat = new_chat(server.url)
    report.chats.append(chat)
    code = asyncio.run(_drive_until_exit(server, chat, report.stats, seed, limit=20.0))
    report.self_exits.append(code)
    server.kill()
    server = ServerProcess(data_dir, extra_env).start()
    check_after_restart(data_dir, report, point)
    before = len(report.stats.acked)
    asyncio.run(_one_more_turn(server, chat, report.stats, seed))
    if len(report.stats.acked) == before:
        report.lost.append(f"{point}: the restarted server completed no turn")
    server.kill()
    server = ServerProcess(data_dir, extra_env).start()
    check_after_restart(data_dir, report, f"{point} (killed after a new turn)")
    server.kill()
    report.acked_turns = len(report.stats.acked)
    return report


async def _one_more_turn(server: ServerProcess, chat: str, stats, seed: int) -> None:
    await asyncio.wait_for(Learner(server.ws_url, chat, random.Random(seed), stats).run(1), 15)
