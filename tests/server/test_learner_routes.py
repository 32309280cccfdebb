"""The learner model's reads over the real HTTP app: `GET /api/graph?as_of=`,
`GET /api/review?as_of=`, `GET /api/calibration`. The app's clock stands a month after the
lessons (`NOW`); a read that names no moment is as of it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from litestar.testing import TestClient

from backend.server.app import create_app
from backend.server.settings import Settings
from tests.fakes import ScriptedModel
from tests.server.learner_graph import HOUR, NOW, T0, write_graph


class StillClock:
    """The app's clock, standing at `NOW` (a test moves it)."""

    def __init__(self, now: datetime) -> None:
        self.current = now

    def now(self) -> datetime:
        return self.current


def serving(data_dir: Path, now: datetime, **settings) -> TestClient:
    app = create_app(
        Settings(data_dir=data_dir, **settings), model=ScriptedModel([]), clock=StillClock(now)
    )
    return TestClient(app=app)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    write_graph(tmp_path / "data")
    with serving(tmp_path / "data", NOW) as client:
        yield client


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def states(graph: dict) -> dict[str, str]:
    return {n["id"]: n["state"] for n in graph["nodes"]}


def test_the_graph_is_as_of_the_clocks_now_unless_a_moment_is_named(client):
    now = client.get("/api/graph").json()
    assert now["as_of"] == iso(NOW)
    nodes = {n["id"]: n for n in now["nodes"]}
    assert nodes["p-add"]["state"] == "fading"  # verified a month ago, recall now ~0.8
    memory = nodes["p-add"]["memory"]
    assert 0.5 < memory["retrievability"] < 0.9 and memory["due"] < iso(NOW)

    then = client.get("/api/graph", params={"as_of": iso(T0 + 2 * HOUR)}).json()
    assert then["as_of"] == iso(T0 + 2 * HOUR)
    assert states(then) == {
        "p-add": "verified",
        "p-den": "shaky",
        "p-guess": "introduced",  # right, but a guess: alone it never verifies
        "p-sum": "introduced",  # answered (wrong) only at 3 h
    }  # the misconception was shown at 3 h: not there yet
    assert {n["id"]: n["memory"] for n in then["nodes"]}["p-sum"] is None

    before = client.get("/api/graph", params={"as_of": "2026-03-01"}).json()  # a date: midnight
    assert before["nodes"] == [] and before["as_of"] == "2026-03-01T00:00:00Z"


def test_the_review_queue_ranks_what_to_study_and_says_why(client):
    queue = client.get("/api/review").json()
    assert queue["as_of"] == iso(NOW) and queue["total"] == 5
    ranked = [(i["priority"], i["reason"], i["node_id"]) for i in queue["items"]]
    assert ranked == [
        (1, "confidently_wrong", "p-den"),
        (2, "misconception_open", "m-sum"),
        (3, "due", "p-sum"),
        (4, "due", "p-guess"),
        (5, "due", "p-add"),
    ]
    first = queue["items"][0]
    assert first["detail"] == "You said you were sure, and answered “3/4”; the answer was “5/6”."
    assert first["statement"] == "The denominator counts the equal parts"
    assert 0 < first["retrievability"] < 0.9 and first["due"] is not None

    top = client.get("/api/review", params={"limit": 1}).json()
    assert [i["node_id"] for i in top["items"]] == ["p-den"] and top["total"] == 5

    next_day = client.get("/api/review", params={"as_of": iso(T0 + timedelta(days=1))}).json()
    reasons = {i["node_id"]: i["reason"] for i in next_day["items"]}
    assert "p-add" not in reasons  # the day after: still well remembered


def test_calibration_counts_each_answer_once_and_says_when_there_are_too_few(client):
    calibration = client.get("/api/calibration").json()
    # four answers carry a confidence; the one that showed the misconception carries none
    assert calibration["answers"] == 4 and calibration["verdict"] == "too_few_answers"
    assert calibration["accuracy"] == 0.75
    assert calibration["brier"] == pytest.approx((0.1**2 + 0.4**2 + 0.9**2 + 0.75**2) / 4)
    early = client.get("/api/calibration", params={"as_of": iso(T0 + HOUR)}).json()
    assert early["answers"] == 1


@pytest.mark.parametrize("path", ["/api/graph", "/api/review", "/api/calibration"])
@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", "", "1e9"])
def test_a_bad_as_of_is_a_400_that_says_what_a_moment_looks_like(client, path, bad):
    answer = client.get(path, params={"as_of": bad})
    assert answer.status_code == 400
    body = answer.json()
    assert body["code"] == "bad_request" and "ISO 8601" in body["detail"]
    assert "Traceback" not in answer.text


def test_a_limit_out_of_range_is_a_400(client):
    for limit in ("0", "-3", "many", "10001"):
        assert client.get("/api/review", params={"limit": limit}).status_code == 400


def test_the_desired_retention_setting_decides_what_is_fading(tmp_path):
    write_graph(tmp_path / "data")
    three_days = T0 + timedelta(days=3)  # p-add's recall is ~0.97 by then
    with serving(tmp_path / "data", three_days, desired_retention=0.99) as strict:
        assert states(strict.get("/api/graph").json())["p-add"] == "fading"
        assert "p-add" in {i["node_id"] for i in strict.get("/api/review").json()["items"]}


def test_by_default_a_recall_of_0_97_is_not_fading(client):
    three_days = iso(T0 + timedelta(days=3))
    assert states(client.get("/api/graph", params={"as_of": three_days}).json())["p-add"] == (
        "verified"
    )
