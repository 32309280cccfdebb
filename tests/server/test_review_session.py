"""A review session end to end on the offline tutor, over the real HTTP app and WebSocket
(issue 19 items 4 and 5): a lesson in which the learner shows a named misconception; a
month later `POST /api/chats {"mode": "review"}` opens a review whose teacher gets the due
items; the tutor asks the misconception's discriminating question first; answered right,
unaided, in this later session, the misconception is `resolved` on the graph."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import pytest
from litestar.testing import TestClient

from backend.agent.offline import OfflineTutor, load_lessons
from backend.agent.offline.lessons import belief_words, node_for_prompt
from backend.core.questions import expected_text, format_number
from backend.server.app import create_app
from backend.server.settings import Settings
from shared_contracts.frames import Question, ServerFrame, TurnFinished
from shared_contracts.questions import MultipleChoice, Numeric, ShortAnswer
from tests.fakes import FixedClock

DECODE = msgspec.json.Decoder(ServerFrame)
LESSONS = load_lessons()
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
BELIEF = "thinks the bottom number of a fraction is called the numerator"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(start=T0)


@pytest.fixture
def client(tmp_path: Path, clock: FixedClock) -> Iterator[TestClient]:
    app = create_app(Settings(data_dir=tmp_path / "data"), model=OfflineTutor(), clock=clock)
    with TestClient(app=app) as client:
        yield client


def answer_for(frame: Question, right: bool) -> object:
    """The learner's answer to a lesson question (or one built from it): the key, or the
    wrong belief the question's lesson node names (a plain slip when it names none)."""
    public = frame.question
    found = node_for_prompt(public.prompt, LESSONS)
    if found is None:  # a prerequisite's check, or a free-form question
        return check_answer(public.prompt) or "more pictures, please"
    quiz, belief = found[1].quiz, found[1].misconception
    target = expected_text(quiz) if right or belief is None else belief_words(quiz, belief)
    if public.kind == "multiple_choice":
        if isinstance(quiz, MultipleChoice) and not right and belief is not None:
            return belief.answer
        if isinstance(quiz, MultipleChoice):
            return (
                quiz.correct if right else next(o.id for o in quiz.options if o.id != quiz.correct)
            )
        return next(o.id for o in public.options if o.text == target)
    if isinstance(quiz, Numeric):
        return format_number(quiz.answer) if right else (belief.answer if belief else "-1")
    assert isinstance(quiz, ShortAnswer)
    return target if right or belief else "no idea"


def check_answer(prompt: str) -> str | None:
    """The key of a prerequisite's check question in the library (None: not one)."""
    for lesson in LESSONS:
        for pre in (p for n in lesson.nodes for p in n.rests_on):
            check = pre.check
            if check is not None and check.prompt == prompt:
                if isinstance(check, MultipleChoice):
                    return check.correct
                return expected_text(check)
    return None


def session(client: TestClient, chat: str, opener: str, wrong: set[str]) -> list[Question]:
    """Say `opener`, then answer every question (fairly sure) until the tutor stops;
    questions whose prompt is in `wrong` are answered with the belief the first time."""
    asked: list[Question] = []
    missed: set[str] = set()
    with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
        DECODE.decode(ws.receive_text(timeout=10))  # the snapshot
        ws.send_text(msgspec.json.encode({"type": "user_message", "text": opener}).decode())
        for _ in range(30):
            frames = []
            while not frames or not isinstance(frames[-1], TurnFinished):
                frames.append(DECODE.decode(ws.receive_text(timeout=30)))
            questions = [f for f in frames if isinstance(f, Question)]
            asked += questions
            if frames[-1].reason != "awaiting_answer":
                return asked
            question = questions[-1]
            prompt = question.question.prompt
            right = prompt not in wrong or prompt in missed
            missed.add(prompt)
            reply = {
                "type": "answer",
                "tool_call_id": question.tool_call_id,
                "answer": answer_for(question, right),
                "confidence": 0.6,
            }
            ws.send_text(msgspec.json.encode(reply).decode())
    raise AssertionError("the session did not end")


def folded(client: TestClient, chat: str) -> dict:
    """End the session (the extraction flush) and wait until every answer of it is in the
    graph (a run started mid-session may still be folding when the flush is asked for)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        accepted = client.post(f"/api/chats/{chat}/extract")
        assert accepted.status_code == 202
        graph = client.get("/api/graph").json()
        folded_chats = {s["chat_id"] for s in graph["sessions"]}
        if accepted.json()["pending_answers"] == 0 and chat in folded_chats:
            return graph
        time.sleep(0.05)
    raise AssertionError("the extraction did not fold the session")


def test_a_review_probes_the_misconception_and_resolves_it(client, clock):
    lesson = client.post("/api/chats", json={}).json()["id"]
    meaning = LESSONS[0].nodes[0].quiz.prompt  # "What is the bottom number ... called?"
    session(client, lesson, "teach me fractions", wrong={meaning})
    graph = folded(client, lesson)
    (belief,) = [n for n in graph["nodes"] if n["kind"] == "misconception"]
    assert belief["statement"] == BELIEF and belief["state"] == "misconception"

    clock.current = T0 + timedelta(days=30)
    queue = client.get("/api/review").json()
    assert queue["items"][0]["node_id"] == belief["id"]
    created = client.post("/api/chats", json={"mode": "review"})
    assert created.status_code == 201
    review = created.json()
    assert (review["mode"], review["title"]) == ("review", "Review")
    assert client.get(f"/api/chats/{review['id']}").json()["mode"] == "review"

    asked = session(client, review["id"], "Let's review", wrong=set())
    first = asked[0].question
    assert first.kind == "multiple_choice" and first.prompt == meaning
    assert sorted(o.text for o in first.options) == ["denominator", "numerator"]  # the belief
    assert len(asked) == len({q.tool_call_id for q in asked}) >= 2  # each due item probed

    after = {n["id"]: n for n in folded(client, review["id"])["nodes"]}
    resolved = after[belief["id"]]
    assert resolved["state"] == "resolved"
    assert resolved["resolution"]["chat_id"] == review["id"]
    assert resolved["resolution"]["question"] == meaning
    assert not [n for n in after.values() if n["kind"] == "misconception" and n is not resolved]
