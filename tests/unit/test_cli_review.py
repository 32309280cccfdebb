"""`harness review` and `harness graph --as-of` over a data dir: as of the system clock's now
or of a named moment (the tests name one: the graph's lessons are in 2026); a bad moment is
one line."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backend.cli import main
from tests.server.learner_graph import HOUR, NOW, T0, write_graph


@pytest.fixture
def data(env: Path) -> Path:
    write_graph(env / "data")
    return env / "data"


def test_review_lists_the_queue_most_urgent_first_with_its_reasons(data, capsys):
    assert main(["review", "--as-of", NOW.isoformat()]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("to review as of 2026-04-01") and "5 item(s)" in out[0]
    assert out[1].startswith("  1. [sure, but wrong, recall ")
    assert out[1].endswith("The denominator counts the equal parts")
    assert "You said you were sure" in out[2]
    assert "[mix-up" in out[3] and "[due" in out[5]


def test_review_json_is_the_review_queue_and_takes_a_moment_and_a_limit(data, capsys):
    assert main(["review", "--json", "--limit", "2", "--as-of", "2026-04-01T09:00Z"]) == 0
    queue = json.loads(capsys.readouterr().out)
    assert [i["node_id"] for i in queue["items"]] == ["p-den", "m-sum"] and queue["total"] == 5
    assert main(["review", "--json", "--as-of", T0.isoformat()]) == 0
    assert json.loads(capsys.readouterr().out)["items"] == []  # nothing answered yet


def test_without_a_moment_review_is_as_of_now(data, capsys):
    before = datetime.now(UTC)
    assert main(["review", "--json"]) == 0
    as_of = datetime.fromisoformat(json.loads(capsys.readouterr().out)["as_of"])
    # never earlier than the graph's newest line (a clock behind the data hides nothing)
    assert before - timedelta(seconds=1) <= as_of <= max(datetime.now(UTC), T0 + 3 * HOUR)


def test_graph_counts_states_as_of_a_moment(data, capsys):
    assert main(["graph", "--as-of", NOW.isoformat()]) == 0
    assert "fading" in capsys.readouterr().out
    assert main(["graph", "--as-of", "2026-03-03"]) == 0
    out = capsys.readouterr().out
    assert "fading" not in out and "verified" in out


@pytest.mark.parametrize("command", ["review", "graph"])
def test_a_bad_moment_is_one_line_and_exit_2(data, capsys, command):
    assert main([command, "--as-of", "next tuesday"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"harness {command}: --as-of: as_of must be")
