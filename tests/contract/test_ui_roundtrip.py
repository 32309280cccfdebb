"""5. UI <-> API: every server frame variant round-trips through the UI's one decoder and has
a handler in the UI's reducer; the UI talks to a real API through its own client code; and
the UI never decodes JSON without a contract type."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import anyio
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.server.hub import ENCODER as SERVER_ENCODER
from shared_contracts.chat import ChatSummary
from shared_contracts.frames import (
    ErrorFrame,
    Pong,
    ServerFrame,
    Snapshot,
    TextDelta,
    TurnFinished,
    TurnStarted,
)
from shared_contracts.graph import GraphSnapshot
from tests.contract.frame_strategies import instances
from tests.contract.live import LiveServer, live_server
from tests.contract.test_ws_frames import InstantModel
from ui import api as ui_api
from ui import link
from ui.model import room

SERVER_FRAME_TYPES: tuple[type, ...] = get_args(ServerFrame)
UI_DIR = Path(__file__).resolve().parents[2] / "ui"


def test_the_ui_decoder_is_the_server_frame_union():
    assert link.DECODER.type == ServerFrame


def test_every_server_frame_variant_has_a_ui_handler():
    missing = [t.__name__ for t in SERVER_FRAME_TYPES if t not in room.HANDLERS]
    assert not missing, f"ServerFrame variants the UI reducer does not handle: {missing}"
    stale = [t.__name__ for t in room.HANDLERS if t not in SERVER_FRAME_TYPES]
    assert not stale, f"UI handlers for types that are not ServerFrames: {stale}"


@pytest.mark.parametrize("kind", SERVER_FRAME_TYPES, ids=lambda t: t.__name__)
def test_each_variant_round_trips_and_reduces(kind: type):
    @settings(
        max_examples=15,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(frame=instances(kind), base=st.sampled_from([room.Room(), room.Room(chat_id="c1")]))
    def run(frame: Any, base: room.Room) -> None:
        wire = SERVER_ENCODER.encode(frame)
        decoded = link.decode(wire)
        assert decoded == frame, f"{kind.__name__} changed on the way: {decoded!r}"
        assert isinstance(room.apply_frame(base, decoded), room.Room)

    run()


def test_an_unreadable_frame_becomes_an_error_frame_not_an_exception():
    decoded = link.decode(b'{"type":"from_the_future","x":1}')
    assert isinstance(decoded, ErrorFrame) and decoded.code == "bad_frame"


class _Untyped(ast.NodeVisitor):
    """Finds JSON decoding without a contract type: `json.load(s)`, untyped msgspec
    `decode`/`Decoder()`."""

    def __init__(self) -> None:
        self.found: list[str] = []

    def visit_Call(self, node: ast.Call) -> None:
        name = ast.unparse(node.func)
        typed = any(k.arg == "type" for k in node.keywords)
        if name in {"json.loads", "json.load"}:
            self.found.append(f"{node.lineno}: {name}")
        elif name.endswith("json.decode") and not typed and len(node.args) < 2:
            self.found.append(f"{node.lineno}: {name} without type=")
        elif name.endswith("json.Decoder") and not typed and not node.args:
            self.found.append(f"{node.lineno}: {name}() without a type")
        self.generic_visit(node)


def test_the_ui_never_decodes_json_without_a_contract_type():
    problems = []
    for path in sorted(UI_DIR.rglob("*.py")):
        visitor = _Untyped()
        visitor.visit(ast.parse(path.read_text("utf-8")))
        problems += [f"ui/{path.relative_to(UI_DIR)}:{found}" for found in visitor.found]
    assert not problems, "untyped JSON decoding in the UI:\n" + "\n".join(problems)


# --- a real API, through the UI's own client code ---------------------------------------


@pytest.fixture(scope="module")
def api(tmp_path_factory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("ui-roundtrip") / "data", InstantModel()) as server:
        yield server


@pytest.fixture
def ui_env(api: LiveServer, monkeypatch: pytest.MonkeyPatch) -> LiveServer:
    monkeypatch.setenv("LH_API_URL", api.http)
    monkeypatch.delenv("LH_API_TOKEN", raising=False)
    return api


async def test_the_ui_http_client_decodes_every_answer(ui_env):
    summary = await ui_api.create_chat("contract")
    assert isinstance(summary, ChatSummary) and summary.title == "contract"
    assert summary.id in {c.id for c in await ui_api.list_chats()}
    assert isinstance(await ui_api.get_graph(), GraphSnapshot)
    accepted = await ui_api.extract(summary.id)
    assert accepted.chat_id == summary.id
    with pytest.raises(ui_api.ApiError, match="404"):
        await ui_api.get_job("no-such-job")


async def test_a_lesson_turn_reaches_the_ui_reducer_through_the_ui_link(ui_env):
    chat = await ui_api.create_chat("link")
    outbox: asyncio.Queue[bytes] = asyncio.Queue()
    seen: list[Any] = []
    errors: list[str] = []
    state = {"room": room.Room(chat_id=chat.id)}

    async def apply(frames: list[Any], status: room.Connection | None) -> bool:
        if status == "connected":
            outbox.put_nowait(b'{"type":"user_message","text":"teach me","client_id":"u1"}')
        seen.extend(frames)
        state["room"] = room.apply_frames(state["room"], frames)
        if any(isinstance(f, TurnFinished) for f in frames):
            outbox.put_nowait(b'{"type":"ping"}')
        return not any(isinstance(f, Pong) for f in frames)

    async def on_error(message: str) -> None:
        errors.append(message)

    with anyio.fail_after(20):
        await link.run_link(chat.id, outbox, apply, on_error, timing=link.Timing(flush=0.01))
    assert not errors
    kinds = [type(f) for f in seen]
    assert kinds[0] is Snapshot and kinds[-1] is Pong
    assert {TurnStarted, TextDelta, TurnFinished} <= set(kinds)
    assert not [f for f in seen if isinstance(f, ErrorFrame)]
    finished = next(f for f in seen if isinstance(f, TurnFinished))
    assert finished.reason == "stop"
    shown = msgspec.json.encode(state["room"]).decode()
    assert "Noted." in shown, "the teacher's streamed text is not in the UI's room"
