"""4. WebSocket frames against a real server: valid frames from the ClientFrame types are
accepted, every mutated one gets exactly one typed `error`, oversize frames close 1009,
the socket answers a ping afterwards, and nothing is logged as an error or traceback."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import strategies as st

from shared_contracts.frames import (
    MAX_INBOUND_FRAME_BYTES,
    Abort,
    Answer,
    ErrorFrame,
    Ping,
    TurnFinished,
    TurnStarted,
    UserMessage,
)
from shared_contracts.model_io import ModelEvent, ModelRequest
from tests.contract import frame_strategies as fs
from tests.contract.live import LiveServer, live_server
from tests.contract.ws_probe import Probe, reaction
from tests.fakes import text_reply

QUOTAS = {
    "valid": 2500,
    "user_message": 100,
    "mutated_text": 5000,
    "random_bytes": 2250,
    "deep_nesting": 80,
    "size_boundaries": 120,
}
"""Frames each test must check at least (examples x minimum list size); together the CI
floor of 10,000."""

FAST = settings(
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: the socket state moved on
    suppress_health_check=list(HealthCheck),
    verbosity=Verbosity.quiet,  # examples can be 64 KiB; the assertion shows a prefix
)


class InstantModel:
    """A teacher that answers every turn at once with a short text (turns stay cheap)."""

    name = "instant"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        for event in text_reply("Noted."):
            yield event


class Problems(logging.Handler):
    """Collects every record that is an error or carries a traceback."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info:
            self.records.append(record)


@pytest.fixture(scope="module")
def logged() -> Iterator[Problems]:
    handler = Problems()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)


@pytest.fixture(scope="module")
def api(tmp_path_factory, logged: Problems) -> Iterator[LiveServer]:
    data = tmp_path_factory.mktemp("ws-frames") / "data"
    # The flood guard is not the subject here: lift it.
    unlimited = {"ws_frames_per_second": 1e9, "ws_burst": 10**9}
    with live_server(data, InstantModel(), **unlimited) as server:
        yield server


@pytest.fixture
def probe(api: LiveServer, logged: Problems) -> Iterator[Probe]:
    before = len(logged.records)
    response = httpx.post(api.http + "/api/chats", json={"title": "contract"}, timeout=10)
    assert response.status_code == 201
    probe = Probe(f"{api.ws}/api/chats/{response.json()['id']}/ws").open()
    try:
        yield probe
        if probe.is_open:  # a test that lost its socket has already failed
            probe.ping_pong()
    finally:
        probe.close()
    new = logged.records[before:]
    assert not new, "logged as error/traceback:\n" + "\n".join(
        f"{r.name}: {r.getMessage()}" for r in new
    )


def test_the_quotas_reach_ten_thousand_frames():
    assert sum(QUOTAS.values()) >= 10_000


def test_valid_frames_are_accepted(probe: Probe):
    @settings(FAST, max_examples=100)
    @given(st.lists(fs.valid_frames(Ping, Abort, Answer), min_size=25, max_size=40))
    def run(frames):
        raws = [fs.encode(f) for f in frames]
        assert all(reaction(r) in {"pong", "silent", "no_pending_question"} for r in raws)
        probe.check(raws)

    run()
    assert probe.checked >= QUOTAS["valid"]


def test_user_messages_start_turns(probe: Probe):
    @settings(FAST, max_examples=QUOTAS["user_message"])
    @given(fs.valid_frames(UserMessage))
    def run(frame):
        raw = fs.encode(frame)
        assert reaction(raw) == "turn"
        probe.check([raw])

    run()
    assert probe.turns >= QUOTAS["user_message"]


def test_a_second_user_message_during_a_turn_is_busy_or_a_new_turn(probe: Probe):
    raw = fs.encode({"type": "user_message", "text": "again"})
    probe.send(raw)
    probe.send(raw)
    started = finished = busy = 0
    while not (started and started == finished and started + busy == 2):
        frame = probe.recv()
        if isinstance(frame, ErrorFrame):
            assert frame.code == "busy", frame
            busy += 1
        started += isinstance(frame, TurnStarted)
        finished += isinstance(frame, TurnFinished)
    probe.ping_pong()


def test_mutated_text_frames_get_exactly_one_error_each(probe: Probe):
    @settings(FAST, max_examples=200)
    @given(st.lists(fs.mutated_text_frames(), min_size=25, max_size=35))
    def run(raws):
        probe.check(raws)

    run()
    assert probe.checked >= QUOTAS["mutated_text"]


def test_random_bytes_get_exactly_one_error_each(probe: Probe):
    @settings(FAST, max_examples=90)
    @given(st.lists(st.binary(max_size=300), min_size=25, max_size=35))
    def run(raws):
        probe.check(raws)

    run()
    assert probe.checked >= QUOTAS["random_bytes"]


DEEPEST = [
    "[" * 30_000 + "]" * 30_000,
    '{"a":' * 5_000 + "1" + "}" * 5_000,
    '{"type":"ping","x":' + "[" * 20_000 + "]" * 20_000 + "}",
    '{"type":"answer","tool_call_id":"c1","answer":' + "[" * 20_000 + "]" * 20_000 + "}",
    '{"type":"user_message","text":' + '{"a":' * 5_000 + "1" + "}" * 5_001,
]


@pytest.mark.parametrize("raw", DEEPEST, ids=lambda r: r[:12])
def test_the_deepest_nesting_gets_one_error(probe: Probe, raw: str):
    probe.check([raw])


def test_deep_nesting_gets_one_error(probe: Probe):
    @settings(FAST, max_examples=40)
    @given(st.lists(fs.deep_nesting(), min_size=2, max_size=4))
    def run(raws):
        assert all(reaction(r) == "bad_frame" for r in raws)
        probe.check(raws)

    run()
    assert probe.checked >= QUOTAS["deep_nesting"]


def padded_ping(size: int) -> str:
    """A valid ping of exactly `size` bytes (JSON whitespace padding)."""
    return fs.encode({"type": "ping"})[:-1] + " " * (size - 15) + "}"


def big_user_message(size: int) -> str:
    """A user_message of exactly `size` bytes whose text is over its 16,000 limit."""
    head = '{"type":"user_message","text":"'
    return head + "x" * (size - len(head) - 2) + '"}'


LIMIT = MAX_INBOUND_FRAME_BYTES


def test_size_boundaries_around_64_kib(probe: Probe):
    assert len(padded_ping(LIMIT)) == LIMIT and reaction(padded_ping(LIMIT)) == "pong"
    probe.check([padded_ping(LIMIT - 1), padded_ping(LIMIT)])
    probe.check([big_user_message(LIMIT - 1), big_user_message(LIMIT)])
    probe.check([padded_ping(LIMIT + 1)])
    probe.check([padded_ping(LIMIT).encode(), (padded_ping(LIMIT + 1)).encode()])

    @settings(FAST, max_examples=40)
    @given(
        st.lists(
            st.tuples(st.integers(LIMIT - 48, LIMIT + 48), st.booleans(), st.booleans()),
            min_size=3,
            max_size=5,
        )
    )
    def run(specs):
        raws = []
        for size, as_ping, as_bytes in specs:
            raw = padded_ping(size) if as_ping else big_user_message(size)
            raws.append(raw.encode() if as_bytes else raw)
        probe.check(raws)

    run()
    assert probe.checked >= QUOTAS["size_boundaries"]


def test_multibyte_text_over_64_kib_closes_1009(probe: Probe):
    """The limit is bytes on the wire: 32,769 two-byte characters are 65,538 bytes."""
    raw = '{"type":"user_message","text":"' + "é" * 32_769 + '"}'
    assert len(raw) < LIMIT < len(raw.encode())
    probe.check([raw])
