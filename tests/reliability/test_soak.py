"""Item 7 (`make soak`): 50 concurrent learners on the offline tutor against a real
`harness serve` for LH_SOAK_SECONDS (default 600): zero lost turns, zero unexpected closes,
flat RSS and fd count after warm-up (sampled from /proc), p50/p99 turn latency.

Most learners work as learners do: a session (one chat) of 20 to 60 turns, then a new
one, so sessions open and close all run long (what a leak of per-session state shows up
in). LH_SOAK_LONG of them (default 5) keep one chat all run, several hundred turns long.
An open session's chat is held decoded by design, so those few grow the server by their
chats' size; LH_SOAK_LONG=50 makes every session one long chat."""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass, field

import httpx
import pytest

from tests.reliability.disk_check import lost_turns
from tests.reliability.figures import mean, ms, percentile, table
from tests.reliability.learner import Learner, LearnerStats, new_chat, new_chat_async
from tests.reliability.server_proc import ServerProcess, run_verify

SESSIONS = int(os.environ.get("LH_SOAK_SESSIONS", "50"))
SECONDS = float(os.environ.get("LH_SOAK_SECONDS", "600"))
THINK = (0.5, 2.0)  # seconds a learner reads before answering
LESSON = (20, 60)  # turns in a session before the learner starts a new one
LONG = int(os.environ.get("LH_SOAK_LONG", "5"))  # learners who keep one chat all run
WARMUP = 0.25  # the first quarter of the run is warm-up


@dataclass
class Samples:
    at: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    fds: list[int] = field(default_factory=list)

    def window(self, values: list, lo: float, hi: float) -> list:
        span = self.at[-1] - self.at[0]
        start = self.at[0]
        return [v for t, v in zip(self.at, values, strict=True)
                if start + lo * span <= t <= start + hi * span]  # fmt: skip


def timeline(values: list[int], scale: int) -> str:
    step = max(1, len(values) // 10)
    return " ".join(f"{v / scale:.0f}" for v in values[::step])


async def sample(server: ServerProcess, out: Samples, until: float) -> None:
    """Once a second until `until` (before the learners start closing their sockets)."""
    while time.monotonic() < until:
        out.at.append(time.monotonic())
        out.rss_kb.append(server.rss_kb())
        out.fds.append(server.fd_count())
        await asyncio.sleep(1.0)


async def learner_slot(
    server: ServerProcess, client: httpx.AsyncClient, first_chat: str, i: int,
    stats: LearnerStats, until: float, chats: list[str],
) -> None:  # fmt: skip
    """One learner: sessions of LESSON turns, each on a new chat (the first LONG learners:
    one session on `first_chat` until the end)."""
    rng = random.Random(i)
    chat = first_chat
    while time.monotonic() < until:
        turns = None if i < LONG else rng.randint(*LESSON)
        await Learner(server.ws_url, chat, rng, stats, think=THINK).run(turns=turns, until=until)
        if time.monotonic() < until:
            chat = await new_chat_async(client, server.url, f"soak {i}.{len(chats)}")
            chats.append(chat)


async def run_fleet(server: ServerProcess, first: list[str], seconds: float):
    stats = LearnerStats()
    samples = Samples()
    chats = list(first)
    until = time.monotonic() + seconds
    sampler = asyncio.create_task(sample(server, samples, until - 1.5))
    async with httpx.AsyncClient() as client:
        slots = (learner_slot(server, client, chat, i, stats, until, chats)
                 for i, chat in enumerate(first))  # fmt: skip
        outcomes = await asyncio.gather(*slots, return_exceptions=True)
    await sampler
    return stats, samples, chats, [o for o in outcomes if isinstance(o, BaseException)]


@pytest.mark.soak
def test_soak_50_sessions(tmp_path):
    data = tmp_path / "data"
    server = ServerProcess(data).start()
    try:
        chats = [new_chat(server.url, f"soak {i}") for i in range(SESSIONS)]
        start = time.monotonic()
        stats, samples, chats, failures = asyncio.run(run_fleet(server, chats, SECONDS))
        wall = time.monotonic() - start
    finally:
        server.kill()
    restarted = ServerProcess(data).start()  # recovery, then the checks
    code, output = run_verify(data)
    restarted.kill()
    lost = lost_turns(data, stats.acked)
    unexpected = [c for c in stats.close_codes if c != 1000]
    rss_early = mean(samples.window(samples.rss_kb, WARMUP, WARMUP + 0.15))
    rss_late = mean(samples.window(samples.rss_kb, 0.85, 1.0))
    fds_after = samples.window(samples.fds, WARMUP, 1.0)
    errors = [e["code"] for e in stats.errors]
    table(
        f"soak: {SESSIONS} learners × {SECONDS:.0f} s, offline tutor, real server",
        [
            ("wall time", f"{wall:.0f} s"),
            ("sessions (chats) / kept all run", f"{len(chats)} / {min(LONG, SESSIONS)}"),
            ("turns acknowledged", len(stats.acked)),
            ("turns per second", f"{len(stats.acked) / wall:.1f}"),
            ("turn latency p50", ms(percentile(stats.latencies, 50))),
            ("turn latency p99", ms(percentile(stats.latencies, 99))),
            ("turn latency max", ms(max(stats.latencies, default=0.0))),
            ("lost acknowledged turns", len(lost)),
            ("unexpected closes / client failures", f"{len(unexpected)} / {len(failures)}"),
            ("error frames", {c: errors.count(c) for c in sorted(set(errors))}),
            ("RSS after warm-up → end (MiB)", f"{rss_early / 1024:.1f} → {rss_late / 1024:.1f}"),
            ("RSS peak (MiB)", f"{max(samples.rss_kb) / 1024:.1f}"),
            ("fds after warm-up min / max", f"{min(fds_after)} / {max(fds_after)}"),
            ("RSS timeline (MiB, 10 points)", timeline(samples.rss_kb, 1024)),
            ("fd timeline (10 points)", timeline(samples.fds, 1)),
            ("harness verify after restart", f"exit {code}"),
        ],
    )
    assert not failures, failures[:3]
    assert not unexpected and len(stats.close_codes) == len(chats)
    assert not lost, lost[:5]
    assert code == 0, output[-2000:]
    assert len(stats.acked) >= SESSIONS
    assert rss_late <= rss_early * 1.25, "RSS kept growing after warm-up"
    assert max(fds_after) - min(fds_after) <= 10, "file descriptors kept growing"
    assert not [c for c in errors if c not in ("busy",)], errors[:10]
