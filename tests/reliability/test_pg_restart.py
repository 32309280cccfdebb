"""The database restarted under load: every failure is a typed storage error with a
public message (never a driver exception), the stores reconnect on their own, and every
acknowledged write is there afterwards."""

from __future__ import annotations

import time

import anyio
import msgspec
from litestar.testing import TestClient

from backend.core.ports import LedgerBatch, LedgerCursor
from backend.server.app import create_app
from backend.server.settings import Settings
from backend.server.stores import DatabaseUnavailable, open_store_factory
from shared_contracts.frames import ErrorFrame, TurnFinished
from tests.fakes import ScriptedModel, text_reply
from tests.server.test_ws import DECODE, new_chat
from tests.unit.store.factories import chat, event
from tests.unit.store.test_port_contracts import events, new_learner

WORKERS = 6
AFTER_RESTART = 5  # successful rounds each worker needs once the server is back


async def test_a_database_restart_under_load_loses_no_acknowledged_write(
    pg_cluster, pg_url, tmp_path
):
    learner = new_learner()
    acked_turns = 0
    acked_events: list[str] = []
    acked_traces: list[int] = []
    failures: list[BaseException] = []
    restarted = anyio.Event()
    done_after: dict[int, int] = {}

    async with open_store_factory(tmp_path, pg_url) as factory:
        stores = factory.for_learner(learner)
        await stores.chats.create(chat())

        def bump(record):
            return msgspec.structs.replace(record, turns=record.turns + 1)

        async def worker(n: int) -> None:
            nonlocal acked_turns
            i = 0
            while done_after.get(n, 0) < AFTER_RESTART:
                i += 1
                try:
                    await stores.chats.update("chat-1", bump)
                    acked_turns += 1
                    ev = msgspec.structs.replace(event(i), id=f"ev{n}-{i}", ref=f"ref-{n}-{i}")
                    await stores.graph.append(LedgerBatch(events=[ev]))
                    acked_events.append(ev.id)
                    seq = n * 100_000 + i
                    await stores.traces.append("chat-1", events(seq, 1))
                    acked_traces.append(seq)
                    await stores.chats.get("chat-1")
                    if restarted.is_set():
                        done_after[n] = done_after.get(n, 0) + 1
                except Exception as exc:
                    failures.append(exc)
                    await anyio.sleep(0.05)

        async def restart() -> None:
            await anyio.sleep(0.3)
            await anyio.to_thread.run_sync(pg_cluster.restart)
            restarted.set()

        started = time.monotonic()
        with anyio.fail_after(90):
            async with anyio.create_task_group() as tg:
                tg.start_soon(restart)
                for n in range(WORKERS):
                    tg.start_soon(worker, n)
        elapsed = time.monotonic() - started

        assert failures, "the restart happened under load, so some operations failed"
        assert all(isinstance(f, DatabaseUnavailable) for f in failures), {
            type(f).__name__ for f in failures
        }
        for f in failures:
            message = f.public_message()
            assert message == "the server could not save or read this chat (database unavailable)"
        # Nothing acknowledged is lost; an update whose answer was lost may have landed.
        record = await stores.chats.get("chat-1")
        assert acked_turns <= record.turns <= acked_turns + len(failures)
        batch, _ = await stores.graph.read_since(LedgerCursor())
        stored = [e.id for e in batch.events]
        assert set(acked_events) <= set(stored)
        traced = {e.seq for e in await stores.traces.read("chat-1")}
        assert set(acked_traces) <= traced
    print(
        f"\n[pg restart] {WORKERS} workers, {acked_turns} acknowledged turns, "
        f"{len(failures)} typed failures, back in service; {elapsed:.1f} s"
    )


def test_the_learner_gets_a_typed_error_while_the_database_is_down_and_goes_on_after(
    pg_cluster, tmp_path
):
    """Over the real app and WebSocket: a message sent while the database is stopped is
    answered with an error frame (no traceback, no driver text), the socket stays usable,
    and once the database is back the next turn runs and is stored."""
    url = pg_cluster.create_database()
    settings = Settings(data_dir=tmp_path / "data", database_url=url)
    model = ScriptedModel([text_reply("Halves first."), text_reply("Now quarters.")])
    with TestClient(app=create_app(settings, model=model)) as client:
        chat = new_chat(client)
        with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
            receive(ws)
            pg_cluster.stop()
            try:
                send(ws, "teach me halves")
                frames = until(ws, (ErrorFrame, TurnFinished))
                errors = [f for f in frames if isinstance(f, ErrorFrame)]
                assert errors and all(e.code == "storage_error" for e in errors), frames
                assert all("database unavailable" in e.message for e in errors)
                assert not any("psycopg" in e.message or "Traceback" in e.message for e in errors)
                response = client.get(f"/api/chats/{chat}")
                assert response.status_code == 503
                assert "database unavailable" in response.text and "psycopg" not in response.text
            finally:
                pg_cluster.start()
            send(ws, "teach me halves")
            assert isinstance(until(ws, (TurnFinished,))[-1], TurnFinished)
        record = client.get(f"/api/chats/{chat}").json()
        assert [p["text"] for m in record["messages"] for p in m["parts"] if p.get("text")] == [
            "teach me halves",
            "Halves first.",
        ]


def send(ws, text: str) -> None:
    ws.send_text(msgspec.json.encode({"type": "user_message", "text": text}).decode())


def until(ws, kinds: tuple[type, ...]) -> list[object]:
    seen = []
    while True:
        frame = receive(ws)
        seen.append(frame)
        if isinstance(frame, kinds):
            return seen


def receive(ws):
    return DECODE.decode(ws.receive_text(timeout=15))
