"""Item 1: SIGKILL a real `harness serve` at random moments and at named crash points;
after each restart `harness verify` exits 0 and every acknowledged turn is on disk."""

from __future__ import annotations

import os
import time

import pytest

from tests.reliability.crash_supervisor import CrashReport, crash_at, random_kills
from tests.reliability.figures import table

SEED = int(os.environ.get("LH_CRASH_SEED", "20261130"))

# (crash point for `crash_server`, what it means); extraction runs after every answer so
# the graph ledgers are written often.
CRASH_POINTS = [
    ("write@chats/:4", "chat record: after the temp write"),
    ("fsync@chats/:4", "chat record: after the temp fsync"),
    ("replace@chats/:4", "chat record: after the replace"),
    ("fsync_dir@/chats:4", "chat record: after the directory fsync"),
    ("half_write@graph/:1", "mid-ledger-append (torn first graph line)"),
    ("half_write@graph/sessions:1", "mid-checkpoint-append (torn checkpoint)"),
    ("fsync@graph/events:1", "between ledger append and checkpoint"),
    ("write@jobs/:2", "job record: after the temp write"),
    ("half_write@traces/:3", "mid-trace-append"),
]
GRAPH_OFTEN = {"LH_EVERY_N_QUIZ_ANSWERS": "1"}


def summarise(title: str, report: CrashReport, seconds: float) -> None:
    table(
        title,
        [
            ("seed", SEED),
            ("kill cycles", report.cycles),
            ("chats", len(report.chats)),
            ("acknowledged turns", report.acked_turns),
            ("lost acknowledged turns", len(report.lost)),
            ("verify failures", len(report.verify_failures)),
            ("wall time", f"{seconds:.1f} s"),
        ],
    )


def assert_sound(report: CrashReport) -> None:
    assert not report.verify_failures, "\n".join(report.verify_failures[:5])
    assert not report.lost, "\n".join(report.lost[:10])


def test_random_sigkill_cycles(tmp_path):
    start = time.monotonic()
    report = random_kills(tmp_path / "data", cycles=20, seed=SEED)
    summarise("process crash: random SIGKILL", report, time.monotonic() - start)
    assert report.cycles == 20
    assert report.acked_turns >= 20  # the kills landed while turns were really running
    assert_sound(report)


@pytest.mark.parametrize(("point", "meaning"), CRASH_POINTS, ids=[p for p, _ in CRASH_POINTS])
def test_named_crash_point(tmp_path, point, meaning):
    start = time.monotonic()
    report = crash_at(tmp_path / "data", point, SEED, GRAPH_OFTEN)
    summarise(f"crash point {point}: {meaning}", report, time.monotonic() - start)
    assert report.self_exits == [137], f"the server never reached {point}"
    assert_sound(report)


@pytest.mark.soak
def test_random_sigkill_soak(tmp_path):
    cycles = int(os.environ.get("LH_CRASH_CYCLES", "200"))
    start = time.monotonic()
    report = random_kills(tmp_path / "data", cycles=cycles, seed=SEED + 1, max_delay=1.0)
    summarise("process crash soak: random SIGKILL", report, time.monotonic() - start)
    assert report.cycles == cycles
    assert_sound(report)
