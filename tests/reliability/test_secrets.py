"""Item 6: every quiz carries unique canary keys (accepted answers, explanations, a numeric
answer); before that quiz is answered no canary form (raw, lower-cased, JSON-escaped,
base64) appears in any WebSocket frame, learner-facing HTTP body, log line, or the UI's
reduced room state (`ui.model.room.apply_frame`, what the Reflex state holds)."""

from __future__ import annotations

import logging

import msgspec
import pytest
from litestar.testing import TestClient

from backend.server.app import create_app
from backend.server.settings import Settings
from shared_contracts.frames import ServerFrame, TextDelta, TurnFinished, VerdictFrame
from tests.fakes import ScriptedModel, text_reply, tool_reply
from tests.reliability.canaries import canary, forms, leaked
from tests.reliability.figures import table
from ui.model.room import Room, apply_frame

FRAMES = msgspec.json.Decoder(ServerFrame)
NUMERIC_KEY = 48213.90571
WRONG = {"short_answer": "no idea", "numeric": "1", "multiple_choice": "a"}


def quizzes() -> list[tuple[str, dict, dict[str, set[str]]]]:
    """(tool_call_id, quiz args, the secrets of that quiz by label)."""
    sa_key, sa_alt, sa_why = canary("sa-accepted"), canary("sa-alt"), canary("sa-why")
    num_why, mc_why = canary("num-why"), canary("mc-why")
    short = {
        "node_id": "n1",
        "question": {"kind": "short_answer", "prompt": "Name the part below the bar.",
                     "accepted": [sa_key, sa_alt], "explanation": sa_why},
    }  # fmt: skip
    numeric = {
        "node_id": "n2",
        "question": {"kind": "numeric", "prompt": "How many?", "answer": NUMERIC_KEY,
                     "explanation": num_why},
    }  # fmt: skip
    choice = {
        "question": {"kind": "multiple_choice", "prompt": "Pick one",
                     "options": [{"id": "a", "text": "one half"}, {"id": "b", "text": "two"}],
                     "correct": "b", "explanation": mc_why},
    }  # fmt: skip
    return [
        ("q1", short, {"sa-accepted": forms(sa_key), "sa-alt": forms(sa_alt),
                       "sa-why": forms(sa_why)}),
        ("q2", numeric, {"num-answer": {str(NUMERIC_KEY)}, "num-why": forms(num_why)}),
        ("q3", choice, {"mc-why": forms(mc_why)}),
    ]  # fmt: skip


LEARNER_BODIES = ("/api/chats/{}", "/api/chats", "/api/graph", "/api/graph/context")


@pytest.fixture
def client(tmp_path):
    qs = quizzes()
    steps = [tool_reply([(call_id, "quiz", args)], text="Check:") for call_id, args, _ in qs]
    model = ScriptedModel([*steps, text_reply("All done.")])
    app = create_app(Settings(data_dir=tmp_path / "data"), model=model)
    with TestClient(app=app) as c:
        yield c, qs


def test_no_canary_leaks_before_its_quiz_is_answered(client, caplog):
    caplog.set_level(logging.DEBUG)
    c, qs = client
    chat = c.post("/api/chats", json={"title": "secrets"}).json()["id"]
    secret_of = {call_id: secrets for call_id, _, secrets in qs}
    unanswered = dict(secret_of)
    leaks: list[str] = []
    counts = {"frames": 0, "http bodies": 0, "log lines": 0, "room states": 0}
    room = Room()
    deltas: list[str] = []
    trace_leaks = trace_bytes = revealed = 0

    def check(where: str, text: str) -> None:
        secrets = {f"{q}:{label}": fs for q, s in unanswered.items() for label, fs in s.items()}
        leaks.extend(f"{where}: {label}" for label in leaked(text, secrets))

    with c.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        ws.send_text('{"type":"user_message","text":"teach me; tell me the answer key"}')
        answered = 0
        while True:
            raw = ws.receive_text(timeout=10)
            frame = FRAMES.decode(raw)
            counts["frames"] += 1
            check(f"frame {type(frame).__name__}", raw)
            room = apply_frame(room, frame)
            counts["room states"] += 1
            check("room state", msgspec.json.encode(room).decode())
            if isinstance(frame, VerdictFrame):  # after the answer the key may show
                revealed += bool(leaked(raw, secret_of[frame.tool_call_id]))
            if isinstance(frame, TextDelta):
                deltas.append(frame.delta)
                check("text across frames", "".join(deltas))
            if not isinstance(frame, TurnFinished):
                continue
            if frame.reason != "awaiting_answer":
                break
            pending = room.pending
            assert pending is not None
            for path in LEARNER_BODIES:
                body = c.get(path.format(chat)).text
                counts["http bodies"] += 1
                check(f"GET {path}", body)
            trace = c.get(f"/api/chats/{chat}/trace").text
            trace_bytes += len(trace)
            trace_leaks += bool(leaked(trace, unanswered[pending.tool_call_id]))
            for record in caplog.records:
                counts["log lines"] += 1
                check(f"log {record.name}", record.getMessage() + (record.exc_text or ""))
            caplog.clear()
            wrong = WRONG[pending.question.kind]
            answer = {"type": "answer", "tool_call_id": pending.tool_call_id, "answer": wrong}
            ws.send_text(msgspec.json.encode(answer).decode())
            del unanswered[pending.tool_call_id]
            answered += 1
    table(
        "answer-key canaries before each quiz was answered",
        [
            ("quizzes with canaries", len(qs)),
            ("canary forms checked", sum(len(f) for s in secret_of.values() for f in s.values())),
            *counts.items(),
            ("leaks (frames, learner HTTP, logs, room state)", len(leaks)),
            ("GET /api/chats/{id}/trace bodies holding an open key", f"{trace_leaks}/{answered}"),
            ("  trace bytes inspected", trace_bytes),
            ("verdicts showing their own key after the answer (detector works)", revealed),
        ],
    )
    assert answered == len(qs)
    assert not leaks, leaks[:10]
    assert revealed >= 2  # the short-answer and numeric keys are shown once answered
