""" "Review (N)" on home with the queue's top reasons, a review session started from it, and
the calibration line in words (issue 19 items 4 and 6)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import ClassVar
from urllib.parse import parse_qs, urlsplit

import msgspec

from shared_contracts.chat import ChatSummary
from shared_contracts.http import CreateChat
from shared_contracts.learner import Calibration, ReviewItem, ReviewQueue
from tests.ui.learner_samples import AS_OF
from tests.ui.state_doubles import FakeProxy, substate
from ui import api
from ui.components.home_header import header, new_session_button
from ui.components.review_panel import review_panel
from ui.model.learner_view import NOTHING_DUE, calibration_line, review_view
from ui.pages.home import home
from ui.practise import REVIEW_ASK
from ui.state.learner_state import REVIEW_FAILED, LearnerState


def _item(n: int, reason: str = "due") -> ReviewItem:
    return ReviewItem(
        node_id=f"n{n}",
        statement=f"Idea $\\frac{{1}}{{{n}}}$ number {n}",
        kind="proposition",
        state="fading",
        reason=reason,
        priority=n,
        detail=f"Last checked {n} weeks ago; you'd now recall it about 80% of the time.",
    )


QUEUE = ReviewQueue(
    as_of=AS_OF,
    items=[_item(1, "confidently_wrong"), _item(2, "misconception_open"), _item(3)],
    total=5,
)


def test_review_n_counts_the_whole_queue_and_shows_its_first_reasons():
    view = review_view(QUEUE)
    assert (view.count, view.label, view.more) == (5, "Review (5)", "and 2 more")
    assert view.empty_note == ""
    assert [r.reason for r in view.reasons] == ["confidently_wrong", "misconception_open", "due"]
    assert view.reasons[0].statement == "Idea 1/1 number 1"  # labels do not typeset math
    assert view.reasons[2].detail == QUEUE.items[2].detail  # the queue's own sentence
    whole = review_view(ReviewQueue(as_of=AS_OF, items=QUEUE.items, total=3))
    assert whole.more == ""


def test_an_empty_queue_says_so_kindly_and_offers_no_button():
    view = review_view(ReviewQueue(as_of=AS_OF))
    assert (view.count, view.reasons, view.empty_note) == (0, [], NOTHING_DUE)
    assert "Nothing to review" in NOTHING_DUE


def test_review_n_is_the_primary_button_beside_new_session_while_something_is_due():
    head = str(header())
    assert head.index('id:"start-review"') < head.index('id:"new-session"')
    assert "LucideRotateCcw" in head
    # "New session" steps back to soft only while the queue holds something
    assert '"soft" : "solid"' in str(new_session_button()).replace("(", "").replace(")", "")
    panel = str(review_panel())
    for element_id in ("review-reasons", "review-empty", "review-failed", "calibration"):
        assert f'id:"{element_id}"' in panel
    assert "LucideTriangleAlert" in panel and "LucideClock" in panel  # icons beside words
    assert 'as:"h2"' in panel
    assert 'id:"review-panel"' in str(home())


async def test_load_reads_the_queue_head_and_the_calibration(monkeypatch):
    asked: list[int | None] = []

    async def get_review(limit: int | None = None) -> ReviewQueue:
        asked.append(limit)
        return QUEUE

    async def get_calibration() -> Calibration:
        return Calibration(answers=10, accuracy=0.6, mean_confidence=0.8, verdict="overconfident")

    monkeypatch.setattr(api, "get_review", get_review)
    monkeypatch.setattr(api, "get_calibration", get_calibration)
    state = substate(LearnerState)
    await LearnerState.load.fn(FakeProxy(state))
    assert asked == [3] and state.review_loaded and state.review.label == "Review (5)"
    assert state.calibration.startswith("You were right 6 of 10 times")


async def test_a_queue_that_cannot_be_read_is_said_not_shown_empty(monkeypatch):
    async def fails(*args, **kwargs):
        raise api.ApiError("the API answered 500", 500)

    monkeypatch.setattr(api, "get_review", fails)
    monkeypatch.setattr(api, "get_calibration", fails)
    state = substate(LearnerState)
    await LearnerState.load.fn(FakeProxy(state))
    assert state.review_failed == REVIEW_FAILED and state.review.count == 0
    assert state.review.empty_note == ""  # never "nothing to review" when it was not read
    assert state.calibration == ""


async def test_review_n_starts_a_review_chat_and_opens_it_with_its_first_message(monkeypatch):
    created: list[tuple[str | None, str]] = []

    async def create_chat(title: str | None = None, mode: str = "lesson"):
        created.append((title, mode))
        return SimpleNamespace(id="chat-r1")

    monkeypatch.setattr(api, "create_chat", create_chat)
    state = substate(LearnerState)
    state.review = review_view(QUEUE)
    redirect = await state.start_review()
    href = dict((str(k), v._var_value) for k, v in redirect.args)["path"]
    assert created == [("Review: 5 things due", "review")]
    assert urlsplit(href).path == "/chat/chat-r1"
    assert parse_qs(urlsplit(href).query)["ask"] == [REVIEW_ASK]


async def test_a_review_that_cannot_start_says_why(monkeypatch):
    async def create_chat(title: str | None = None, mode: str = "lesson"):
        raise api.ApiError("the API answered 503", 503)

    monkeypatch.setattr(api, "create_chat", create_chat)
    state = substate(LearnerState)
    assert await state.start_review() is None
    assert state.error == "Could not start a review: the API answered 503" and not state.starting


def _line(answers: int, verdict: str, accuracy=None, felt=None) -> str:
    return calibration_line(
        Calibration(answers=answers, accuracy=accuracy, mean_confidence=felt, verdict=verdict)
    )


def test_the_calibration_line_gives_the_verdict_with_the_answers_it_is_from():
    assert _line(10, "overconfident", 0.6, 0.8) == (
        "You were right 6 of 10 times when you said how sure you were, "
        "but felt about 80% sure: a little overconfident."
    )
    quite = _line(20, "overconfident", 0.4, 0.9)
    assert quite.endswith("felt about 90% sure: quite overconfident.")
    assert _line(12, "underconfident", 0.9, 0.5) == (
        "You were right 11 of 12 times when you said how sure you were, "
        "but felt only about 50% sure: quite underconfident (trust yourself more)."
    )
    assert _line(12, "calibrated", 0.75, 0.74).endswith(
        "and felt about that sure: your confidence matches your results."
    )


def test_a_mean_that_disagrees_with_the_verdict_is_left_out_not_contradicted():
    # "sure" and right counts a gap of 0 in the verdict, but -0.1 in a plain mean
    line = _line(10, "overconfident", 0.8, 0.75)
    assert line == "You were right 8 of 10 times when you said how sure you were: overconfident."


def test_no_answers_or_too_few_are_said_plainly():
    assert _line(0, "too_few_answers").startswith("Say how sure you are when you answer")
    assert _line(1, "too_few_answers").startswith("1 answer so far")
    assert _line(4, "too_few_answers", 0.5, 0.6) == (
        "4 answers so far with how sure you were: too few yet to tell whether your "
        "confidence matches your results."
    )


async def test_a_server_without_a_review_queue_shows_no_review_part(monkeypatch):
    async def not_found(*args, **kwargs):
        raise api.ApiError("the API answered 404", 404)

    monkeypatch.setattr(api, "get_review", not_found)
    monkeypatch.setattr(api, "get_calibration", not_found)
    state = substate(LearnerState)
    await LearnerState.load.fn(FakeProxy(state))
    assert not state.review_offered and state.review.count == 0
    assert "review_offered" in str(home())  # the panel is drawn only where it is offered


class _Recorder(BaseHTTPRequestHandler):
    """A one-route API: records each POST body, answers with a chat summary."""

    bodies: ClassVar[list[bytes]] = []

    def do_POST(self) -> None:
        self.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        answer = msgspec.json.encode(
            ChatSummary(
                id="chat-r1",
                title="t",
                created_at=AS_OF,
                updated_at=AS_OF,
                model="m",
                turns=0,
                messages=0,
                mode="review",
            )
        )
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args) -> None:
        return None


async def test_a_review_chat_is_asked_for_in_review_mode_over_the_wire(monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("LH_API_URL", f"http://127.0.0.1:{server.server_address[1]}")
        chat = await api.create_chat("Review: 5 things due", mode="review")
        await api.create_chat("Fractions")
    finally:
        server.shutdown()
    sent = [msgspec.json.decode(body, type=CreateChat) for body in _Recorder.bodies]
    assert [(c.title, c.mode) for c in sent] == [
        ("Review: 5 things due", "review"),
        ("Fractions", "lesson"),
    ]
    assert chat.id == "chat-r1"
