"""Item 4: ≥ 500 hostile ids and names through HTTP paths, WebSocket paths, WebSocket
frames and tool arguments: every one refused with a typed error, and a spy on the stores'
FileOps proves no file call was ever made with (or because of) one of them."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from urllib.parse import quote

import msgspec
import pytest
from litestar.exceptions import WebSocketDisconnect
from litestar.testing import TestClient

from backend.core.ids import is_valid_id
from backend.server.app import create_app
from backend.server.settings import Settings
from backend.server.stores import build_stores
from shared_contracts.chat import ToolPart
from shared_contracts.frames import ErrorFrame, ServerFrame, Snapshot, TurnFinished
from tests.fakes import ScriptedModel, text_reply, tool_reply
from tests.reliability.figures import table
from tests.reliability.hostile import hostile_ids, unsafe_calls
from tests.unit.store.doubles import SpyFileOps

HOSTILE = hostile_ids()
# In a URL path, "" routes elsewhere (`/api/chats/` is the listing) and the router strips a
# trailing slash ("chat--lead/" → the valid id "chat--lead"): paths skip those few.
PATH_HOSTILE = [h for h in HOSTILE if h and not is_valid_id(h.rstrip("/"))]
CALLS_PER_STEP = 250
HTTP_ROUTES = ("/api/chats/{}", "/api/chats/{}/trace", "/api/jobs/{}")
FRAMES = msgspec.json.Decoder(ServerFrame)


def encoded(value: str) -> str:
    """Percent-encode everything, dots too, so the server sees the literal value (a client
    library would otherwise resolve `..` segments before sending)."""
    return quote(value, safe="").replace(".", "%2E")


@pytest.fixture
def app_with_spy(tmp_path: Path):
    spy = SpyFileOps()
    data = tmp_path / "data"
    plan = {"goal": "Fractions", "nodes": [{"id": "root", "title": "Fractions"}]}
    numeric = {"kind": "numeric", "prompt": "?", "answer": 1}
    tools = {
        "plan_add": lambda bad: {"node": {"id": bad, "title": "x"}},
        "plan_mark_done": lambda bad: {"id": bad},
        "plan_update": lambda bad: {"id": bad, "title": "y"},
        "research": lambda bad: {"question": "q", "node_id": bad},
        "quiz": lambda bad: {"node_id": bad, "question": numeric},
    }
    # Steps of at most CALLS_PER_STEP calls: a step's frames are queued for the socket
    # without a pause, and the hub drops a client whose 4096-frame queue overflows.
    steps = [tool_reply([("ok1", "plan_init", plan)])]
    for name, args in tools.items():
        calls = [(f"{name}-{i}", name, args(b)) for i, b in enumerate(HOSTILE)]
        for at in range(0, len(calls), CALLS_PER_STEP):
            steps.append(tool_reply(calls[at : at + CALLS_PER_STEP]))
    model = ScriptedModel([*steps, text_reply("Done.")])
    # No flood limit here: this test sends thousands of frames on purpose (see test_handshake).
    settings = Settings(
        data_dir=data, ws_frames_per_second=1e6, ws_burst=1_000_000, max_steps=len(steps) + 2
    )
    app = create_app(settings, model=model, stores=build_stores(data, fs=spy))
    with TestClient(app=app) as client:
        yield client, spy, data


def test_hostile_ids_never_reach_a_file_call(app_with_spy):
    client, spy, data = app_with_spy
    chat = client.post("/api/chats", json={"title": "t"}).json()["id"]
    outcomes: Counter[str] = Counter()
    problems: list[str] = []
    start = time.monotonic()

    # 1. HTTP paths: a 4xx JSON error, and not one file call.
    for route in HTTP_ROUTES:
        for bad in PATH_HOSTILE:
            before = len(spy.calls)
            response = client.get(route.format(encoded(bad)))
            if not 400 <= response.status_code < 500 or "detail" not in response.text:
                problems.append(f"GET {route} {bad[:30]!r}: {response.status_code}")
            if len(spy.calls) != before:
                problems.append(f"GET {route} {bad[:30]!r}: file calls {spy.calls[before:]}")
            if str(data) in response.text or "Traceback" in response.text:
                problems.append(f"GET {route} {bad[:30]!r}: leaks {response.text[:200]}")
            outcomes[f"HTTP {route} refused ({response.status_code})"] += 1
    # POST /extract on a hostile chat id too
    for bad in PATH_HOSTILE:
        before = len(spy.calls)
        response = client.post(f"/api/chats/{encoded(bad)}/extract")
        if not 400 <= response.status_code < 500 or len(spy.calls) != before:
            problems.append(f"POST extract {bad[:30]!r}: {response.status_code}")
        outcomes[f"HTTP POST extract refused ({response.status_code})"] += 1

    # 2. WebSocket paths: refused at the handshake, before accept, no file call.
    for bad in PATH_HOSTILE:
        before = len(spy.calls)
        try:
            with client.websocket_connect(f"/api/chats/{encoded(bad)}/ws") as ws:
                ws.receive_text(timeout=2)
            problems.append(f"WS path {bad[:30]!r}: accepted")
        except WebSocketDisconnect as closed:
            outcomes[f"WS path refused ({closed.code})"] += 1
        if len(spy.calls) != before:
            problems.append(f"WS path {bad[:30]!r}: file calls {spy.calls[before:]}")

    # 3. WebSocket frames on a real chat: hostile ids as tool_call_id, as the frame type,
    # as extra fields: one typed error each, the socket stays usable.
    spy_mark = len(spy.calls)
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        assert isinstance(FRAMES.decode(ws.receive_text(timeout=5)), Snapshot)
        for bad in HOSTILE:
            for frame in (
                {"type": "answer", "tool_call_id": bad, "answer": "a"},
                {"type": bad},
                {"type": "ping", bad or "k": 1},
            ):
                ws.send_text(msgspec.json.encode(frame).decode())
                got = FRAMES.decode(ws.receive_text(timeout=5))
                if isinstance(got, ErrorFrame):
                    outcomes[f"WS frame refused ({got.code})"] += 1
                else:
                    problems.append(f"WS frame {frame!r:.60}: answered {got}")
            ws.send_text('{"type":"ping"}')
            assert ws.receive_text(timeout=5) == '{"type":"pong"}'
    frame_calls = spy.calls[spy_mark:]

    # 4. Tool arguments: a model calling plan_add / plan_mark_done / plan_update / research
    # and quiz with every hostile id; each call becomes a tool error, none executes.
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        ws.receive_text(timeout=5)
        ws.send_text('{"type":"user_message","text":"teach me"}')
        while not isinstance(FRAMES.decode(ws.receive_text(timeout=30)), TurnFinished):
            pass
    record = client.get(f"/api/chats/{chat}").json()
    parts = [msgspec.convert(p, ToolPart) for m in record["messages"] for p in m["parts"]
             if p["type"] == "tool"]  # fmt: skip
    hostile_parts = [p for p in parts if p.tool_call_id != "ok1"]
    executed = [p for p in hostile_parts if p.state != "output-error"]
    outcomes["tool calls with a hostile id refused"] = len(hostile_parts) - len(executed)
    plan_ids = [n["id"] for n in (record["plan"] or {}).get("nodes", [])]
    unsafe = unsafe_calls(spy.calls, data)
    seconds = time.monotonic() - start
    table(
        "hostile ids and names",
        [
            ("hostile values (frames, tool arguments)", len(HOSTILE)),
            ("hostile values (URL paths)", len(PATH_HOSTILE)),
            *[(k, v) for k, v in sorted(outcomes.items())],
            ("hostile tool calls executed", len(executed)),
            ("plan node ids after the turn", plan_ids),
            ("file calls while WS frames were refused", len(frame_calls)),
            ("file calls outside the safe layout (whole run)", len(unsafe)),
            ("file calls recorded (whole run)", len(spy.calls)),
            ("wall time", f"{seconds:.1f} s"),
        ],
    )
    assert not problems, "\n".join(problems[:10])
    assert len(hostile_parts) == 5 * len(HOSTILE) and not executed
    assert plan_ids == ["root"]
    assert not unsafe, unsafe[:5]
    # Frames are refused by decoding or by the pending-question check: the only files
    # touched meanwhile are the valid chat's own record and trace.
    touched = {Path(str(arg)).name for _, arg in frame_calls}
    assert touched <= {f"{chat}.json", f"{chat}.jsonl", "chats", "traces"}, touched
