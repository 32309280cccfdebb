"""Two API workers on one PostgreSQL database, a research job running long in one of them:
the other never fails it while its worker lives; once that worker is SIGKILLed, the other
fails it as interrupted within two of its sweeps, settles its part and tells its sockets
(the job card stops spinning)."""

from __future__ import annotations

import asyncio
import json
import time

import psycopg
import pytest
import websockets

from backend.agent.jobs.recovery import INTERRUPTED
from tests.reliability.learner import new_chat
from tests.reliability.workers import chat_ws, load_chat, start_worker, until

SWEEP_S = 0.3
"""The orphan sweep's interval in these workers (30 s in production)."""
LIVE_WINDOW_S = 10 * SWEEP_S
"""How long a live worker's job is watched for a wrong failure: ten sweeps of the other."""
LEARN = json.dumps({"type": "user_message", "text": "teach me fractions"})


@pytest.fixture
def workers(tmp_path, database):
    env = {
        "LH_TEST_TEACHER": "research",
        "LH_TEST_CHUNK_S": "0",
        "LH_TEST_JOB_S": "600",  # runs until its worker dies
        "LH_TEST_SWEEP_S": str(SWEEP_S),
    }
    started = [start_worker(tmp_path / "data", database, **env) for _ in range(2)]
    yield started
    for server in started:
        server.kill()


def jobs_of(url: str, chat_id: str) -> list[tuple[str, str, str]]:
    """(id, status, error) of the chat's jobs in the database."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT id, record->>'status', COALESCE(record->>'error', '') FROM jobs"
            " WHERE learner_id = 'local' AND record->>'chat_id' = %s",
            (chat_id,),
        ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def running_within(url: str, chat_id: str, seconds: float = 15.0) -> str:
    """The chat's one job's id once it is running (it starts as its turn ends)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = jobs_of(url, chat_id)
        if found and found[0][1] == "running":
            return found[0][0]
        time.sleep(0.05)
    raise AssertionError(f"no running job: {jobs_of(url, chat_id)}")


async def no_frame(ws, seconds: float) -> list[dict]:
    """The frames `ws` gets within `seconds` (none is expected)."""
    seen: list[dict] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            seen.append(json.loads(await asyncio.wait_for(ws.recv(), left)))
        except TimeoutError:
            break
    return seen


def test_a_killed_workers_running_job_is_failed_by_the_survivor_and_its_card_stops(
    workers, database
):
    a, b = workers
    chat = new_chat(a.url)

    async def scenario() -> dict:
        async with (
            websockets.connect(chat_ws(a, chat)) as on_a,
            websockets.connect(chat_ws(b, chat)) as on_b,
        ):
            await until(on_a, "snapshot")
            await until(on_b, "snapshot")
            await on_a.send(LEARN)
            await until(on_a, "turn_finished", within=30)
            job_id = await asyncio.to_thread(running_within, database, chat)
            # worker b sweeps ten times meanwhile: a job a live worker runs is not its to end
            seen = await no_frame(on_b, LIVE_WINDOW_S)
            assert not [f for f in seen if f["type"] == "job"], seen
            assert jobs_of(database, chat) == [(job_id, "running", "")]
            a.kill()  # SIGKILL by pid: its job is left "running" in the database
            started = time.monotonic()
            frame = (await until(on_b, "job", within=10))[-1]
            frame["after_s"] = time.monotonic() - started
            return frame

    frame = asyncio.run(scenario())
    job = frame["job"]
    assert (job["chat_id"], job["status"], job["error"]) == (chat, "failed", INTERRUPTED)
    assert jobs_of(database, chat) == [(job["id"], "failed", INTERRUPTED)]
    record = load_chat(database, chat)
    assert record is not None
    parts = [p for m in record.messages for p in m.parts if getattr(p, "job_id", None)]
    assert [(p.job_id, p.state, p.error) for p in parts] == [
        (job["id"], "output-error", INTERRUPTED)
    ]
    # the killed worker's locks go with its connection: two sweeps (0.6 s) find the job
    assert frame["after_s"] < 5.0, frame["after_s"]
