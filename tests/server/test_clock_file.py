"""The pedagogy bench's simulated clock (`LH_CLOCK_FILE`): chosen at the composition root
from a start-up setting, read-only, and out of reach of every route."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from litestar.testing import TestClient

from backend.server.app import create_app
from backend.server.runtime import FileClock, SystemClock, clock_from
from backend.server.settings import SettingsError, load_settings
from tests.fakes import ScriptedModel

START = datetime(2031, 3, 1, 9, 0, tzinfo=UTC)
BACKEND = Path(__file__).resolve().parents[2] / "backend"


def write_instant(path: Path, instant: datetime) -> None:
    path.write_text(instant.isoformat())


def created_at(client: TestClient) -> datetime:
    return datetime.fromisoformat(client.post("/api/chats").json()["created_at"])


def test_now_is_the_written_instant_plus_the_real_time_since_it_was_written(tmp_path: Path):
    path = tmp_path / "now"
    write_instant(path, START)
    clock = FileClock(path)
    first = clock.now()
    assert START <= first < START + timedelta(seconds=30)
    assert clock.now() >= first  # a session's own events keep their order
    write_instant(path, START + timedelta(days=30))
    assert START + timedelta(days=30) <= clock.now() < START + timedelta(days=30, seconds=30)
    assert isinstance(clock_from(None), SystemClock)


@pytest.mark.parametrize(
    ("content", "says"),
    [(None, "cannot read"), ("2031-03-01T09:00:00", "with a zone"), ("tomorrow", "ISO instant")],
)
def test_a_bad_clock_file_is_a_settings_error_naming_it(tmp_path: Path, content, says):
    path = tmp_path / "now"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SettingsError, match=f"LH_CLOCK_FILE.*{says}"):
        load_settings({"LH_CLOCK_FILE": str(path)}, dotenv=tmp_path / "none")


def test_the_app_takes_its_time_from_the_file(tmp_path: Path):
    path = tmp_path / "now"
    write_instant(path, START)
    env = {"LH_CLOCK_FILE": str(path), "LH_DATA_DIR": str(tmp_path / "data")}
    app = create_app(load_settings(env, dotenv=tmp_path / "none"), model=ScriptedModel([]))
    with TestClient(app=app) as client:
        assert START <= created_at(client) < START + timedelta(seconds=30)
        write_instant(path, START + timedelta(days=30))
        later = created_at(client)
        assert START + timedelta(days=30) <= later < START + timedelta(days=30, seconds=30)


def test_no_route_can_set_the_clock(tmp_path: Path):
    """Every HTTP route, every method, with bodies and queries naming the clock: the file is
    untouched and the time still comes from it."""
    path = tmp_path / "now"
    write_instant(path, START)
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    env = {"LH_CLOCK_FILE": str(path), "LH_DATA_DIR": str(tmp_path / "data")}
    app = create_app(load_settings(env, dotenv=tmp_path / "none"), model=ScriptedModel([]))
    attempt = {
        "now": "1999-01-01T00:00:00+00:00",
        "clock": "1999-01-01T00:00:00+00:00",
        "clock_file": str(tmp_path / "mine"),
        "LH_CLOCK_FILE": str(tmp_path / "mine"),
        "as_of": "1999-01-01T00:00:00+00:00",
    }
    (tmp_path / "mine").write_text("1999-01-01T00:00:00+00:00")
    with TestClient(app=app) as client:
        chat_id = client.post("/api/chats").json()["id"]
        called = 0
        for route in app.routes:
            url = re.sub(r"\{[^}]+\}", chat_id, route.path)
            for method in sorted(getattr(route, "methods", ())):
                if method in ("HEAD", "OPTIONS"):
                    continue
                client.request(method, url, params=attempt, json=attempt)
                client.request(method, url, params=attempt, headers=attempt)
                called += 1
        assert called >= 8  # every HTTP route was reached, not an empty loop
        assert (path.read_bytes(), path.stat().st_mtime_ns) == before
        assert START <= app.state.services.clock.now() < START + timedelta(minutes=5)
        assert START <= created_at(client) < START + timedelta(minutes=5)


def test_only_settings_and_the_composition_root_know_the_clock_file():
    """The setting is read at start-up into frozen settings and used once, where the clock
    is built: no other backend module (no route, no service) names it."""
    naming = {
        path.relative_to(BACKEND).as_posix()
        for path in BACKEND.rglob("*.py")
        if re.search(r"clock_file|FileClock|LH_CLOCK_FILE", path.read_text("utf-8"))
    }
    assert naming == {"server/settings.py", "server/services.py", "server/runtime.py"}
