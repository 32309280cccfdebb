"""A synchronous WebSocket client that checks each client frame's reaction against the
contract: the reference decoder (`ClientFrame`) decides what the server must answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from shared_contracts.frames import (
    MAX_INBOUND_FRAME_BYTES,
    Abort,
    Answer,
    ClientFrame,
    ErrorFrame,
    Ping,
    Pong,
    ServerFrame,
    Snapshot,
    TurnFinished,
    TurnStarted,
    UserMessage,
)

CLIENT = msgspec.json.Decoder(ClientFrame)
SERVER = msgspec.json.Decoder(ServerFrame)
PING = '{"type":"ping"}'
RECV_TIMEOUT_S = 10.0
MESSAGE_TOO_BIG = 1009

Raw = str | bytes


def wire_size(raw: Raw) -> int:
    return len(raw.encode() if isinstance(raw, str) else raw)


def reaction(raw: Raw) -> str:
    """What the contract says the server answers: `too_large` (close 1009), `bad_frame`,
    `pong`, `silent` (abort), `no_pending_question` (answer: this chat never asks) or
    `turn` (user_message: a turn, or `busy`)."""
    if wire_size(raw) > MAX_INBOUND_FRAME_BYTES:
        return "too_large"
    try:
        frame = CLIENT.decode(raw)
    except (msgspec.DecodeError, RecursionError):  # msgspec raises the latter on deep nesting
        return "bad_frame"
    match frame:
        case Ping():
            return "pong"
        case Abort():
            return "silent"
        case Answer():
            return "no_pending_question"
        case UserMessage():
            return "turn"
    raise AssertionError(f"unhandled client frame {frame!r}")


@dataclass
class Probe:
    """One socket on one chat; counts what it sent and fails on any off-contract answer."""

    url: str
    sent: int = 0
    checked: int = 0
    last_sent: Raw = ""
    turns: int = 0
    socket: ClientConnection | None = field(default=None, repr=False)

    def open(self) -> Probe:
        self.socket = connect(self.url, max_size=None, open_timeout=10, compression=None)
        first = self.recv()
        assert isinstance(first, Snapshot), f"first frame is {first!r}, not a snapshot"
        return self

    @property
    def is_open(self) -> bool:
        return self.socket is not None and self.socket.close_code is None

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close()
            self.socket = None

    def recv(self) -> ServerFrame:
        """The next server frame; a socket the server closed is a contract failure here."""
        try:
            return self._recv()
        except ConnectionClosed as closed:
            code, reason = (closed.rcvd.code, closed.rcvd.reason) if closed.rcvd else (None, "")
            raise AssertionError(
                f"server closed the socket ({code} {reason!r}) after {_show(self.last_sent)}"
            ) from None

    def _recv(self) -> ServerFrame:
        assert self.socket is not None
        raw = self.socket.recv(timeout=RECV_TIMEOUT_S)
        try:
            return SERVER.decode(raw)
        except msgspec.DecodeError as exc:
            raise AssertionError(f"server frame is not a ServerFrame: {raw[:300]!r}") from exc

    def send(self, raw: Raw) -> None:
        assert self.socket is not None
        self.socket.send(raw)
        self.last_sent = raw
        self.sent += 1

    def ping_pong(self) -> None:
        """The socket still answers: a ping's next frame is its pong."""
        self.send(PING)
        frame = self.recv()
        assert frame == Pong(), f"expected pong, got {frame!r}"

    def check(self, raws: Sequence[Raw]) -> None:
        """Send every frame and check each reaction; the socket answers a ping afterwards."""
        self.checked += len(raws)
        batch: list[Raw] = []
        for raw in raws:
            kind = reaction(raw)
            if kind in {"turn", "too_large"}:
                self._check_batch(batch)
                batch = []
                self._check_turn(raw) if kind == "turn" else self._check_too_large(raw)
            else:
                batch.append(raw)
        self._check_batch(batch)

    def _check_batch(self, raws: Sequence[Raw]) -> None:
        """Pipelined: all frames, then a ping; the answers arrive in order."""
        expected = [reaction(raw) for raw in raws]
        for raw in raws:
            self.send(raw)
        self.send(PING)
        try:
            answers = [self.recv() for kind in expected if kind != "silent"]
            last = self.recv()
        except AssertionError as exc:
            shown = "\n  ".join(_show(raw) for raw in raws)
            raise AssertionError(f"{exc}\nwhile answering the batch:\n  {shown}") from None
        assert last == Pong(), f"expected the closing pong, got {last!r}"
        replies = iter(answers)
        for raw, kind in zip(raws, expected, strict=True):
            if kind == "silent":
                continue
            got = next(replies)
            if kind == "pong":
                assert got == Pong(), f"{_show(raw)} -> {got!r}, expected pong"
            else:
                assert isinstance(got, ErrorFrame) and got.code == kind, (
                    f"{_show(raw)} -> {got!r}, expected one error {kind!r}"
                )
                assert got.message, f"{_show(raw)}: error without a message"

    def _check_turn(self, raw: Raw) -> None:
        """A user_message starts a turn (ended by turn_finished) or is refused as busy."""
        self.send(raw)
        first = self.recv()
        if isinstance(first, ErrorFrame):
            assert first.code == "busy", f"{_show(raw)} -> {first!r}"
        else:
            assert isinstance(first, TurnStarted), f"{_show(raw)} -> {first!r}"
            frame = first
            while not isinstance(frame, TurnFinished):
                frame = self.recv()
                assert not isinstance(frame, ErrorFrame), f"{_show(raw)}: turn failed {frame!r}"
            assert frame.turn_id == first.turn_id and frame.reason == "stop", frame
            self.turns += 1
        self.ping_pong()

    def _check_too_large(self, raw: Raw) -> None:
        """Over 64 KiB: the server closes with 1009 and sends nothing else; reconnect."""
        self.send(raw)
        try:
            extra = self._recv()
        except ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd else None
            assert code == MESSAGE_TOO_BIG, f"{_show(raw)}: closed with {code}, expected 1009"
        else:
            raise AssertionError(f"{_show(raw)} ({wire_size(raw)} bytes) -> {extra!r}, not 1009")
        self.close()
        self.open()


def _show(raw: Raw) -> str:
    text = raw if isinstance(raw, str) else repr(raw)
    return f"frame {text[:120]!r}{'...' if len(text) > 120 else ''}"
