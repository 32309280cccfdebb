"""The benchmark harness itself: statistics, goals, exit status, the CLI, the instant model.

These never assert performance: only that the machinery measures, judges and reports.
"""

from __future__ import annotations

import json
import math

import anyio

from bench.__main__ import main
from bench.fake_tutor import tutor_reply
from bench.harness import Check, Result, exit_code, interleave, not_runnable, percentile, table
from bench.registry import BENCHMARKS, BROWSER
from bench.serve import InstantModel, tokens_asked
from shared_contracts.model_io import ModelDone, ModelMessage, ModelRequest, TextChunk


def test_percentile_interpolates_and_handles_edges():
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([5.0], 99) == 5.0
    assert percentile([1.0, 2.0], 100) == 2.0
    assert math.isnan(percentile([], 50))


def test_interleave_alternates_which_runs_first():
    calls: list[str] = []

    def floor() -> float:
        calls.append("f")
        return 1.0

    def subject() -> float:
        calls.append("s")
        return 2.0

    floors, subjects = interleave(4, floor, subject)
    assert calls == ["f", "s", "s", "f", "f", "s", "s", "f"]
    assert floors == [1.0] * 4 and subjects == [2.0] * 4


def test_a_missed_goal_or_a_missing_subject_fails_the_run():
    good = Result(
        id="X", what="x", unit="ms", floor_label="f", floor=[1.0, 1.0], subject=[1.5, 2.5]
    )
    assert good.ratio_median == 2.0
    good.checks = [Check("ratio", good.ratio_median, 2.0)]
    bad = Result(id="Y", what="y", unit="ms", floor_label="f", floor=[1.0], subject=[3.0])
    bad.checks = [Check("ratio", bad.ratio_median, 2.0)]
    assert exit_code([good]) == 0
    assert exit_code([good, bad]) == 1
    assert exit_code([good, not_runnable("B0", "later", "not built yet")]) == 1
    assert exit_code([]) == 1
    assert "MISSED" in table([good, bad]) and "N/A" in table([not_runnable("B0", "x", "y")])


def test_noise_never_passes_a_goal():
    assert not Check("ratio", math.nan, 2.0).passed
    assert not Check("ratio", -0.5, 2.0).passed
    assert Check("litellm imported", 0.0, 0.0).passed


def test_instant_model_streams_the_asked_number_of_chunks():
    assert tokens_asked("tokens:7") == 7
    assert tokens_asked("hello", default=3) == 3
    request = ModelRequest(role="teacher", messages=[ModelMessage(role="user", content="tokens:4")])

    async def collect() -> list:
        return [event async for event in InstantModel().stream(request)]

    events = anyio.run(collect)
    assert [type(e) for e in events] == [TextChunk] * 4 + [ModelDone]
    assert events[-1].message.content == "tok " * 4


def test_the_fake_tutor_streams_what_the_benchmark_asks():
    def texts(reply) -> list[str]:
        return [
            c["choices"][0]["delta"].get("content", "")
            for c in reply.chunks
            if c["choices"] and c["choices"][0]["delta"].get("content")
        ]

    paced = tutor_reply({"messages": [{"role": "user", "content": "tokens:3@20:m1x"}]})
    assert texts(paced) == ["m1xt0 ", "m1xt1 ", "m1xt2 "] and paced.delay == 0.02
    quiz = tutor_reply({"messages": [{"role": "user", "content": "quiz tokens:2"}]})
    calls = [c for c in quiz.chunks if c["choices"] and c["choices"][0]["delta"].get("tool_calls")]
    assert texts(quiz) == ["t0 ", "t1 "] and calls
    assert quiz.chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    after = tutor_reply({"messages": [{"role": "tool", "content": "{}"}]})
    assert texts(after) == ["Right, on we go."]


def test_cli_refuses_unknown_ids_and_too_few_rounds(tmp_path, capsys):
    assert main(["B42", "--out", str(tmp_path / "r.json")]) == 2
    assert main(["B1", "--rounds", "3", "--out", str(tmp_path / "r.json")]) == 2
    assert not (tmp_path / "r.json").exists()


def test_a_subset_runs_only_what_was_asked(tmp_path):
    out = tmp_path / "results.json"
    main(["b9", "--quick", "--out", str(out)])
    data = json.loads(out.read_text())
    assert {r["id"] for r in data["results"]} == {"B9", "B9-scale"}
    assert data["quick"] is True


def test_quick_run_measures_every_benchmark(tmp_path, capsys):
    """Every benchmark runs end to end (servers, clients, data) with tiny sizes; the browser
    rows' own smoke test is a browser test (`tests/e2e/test_bench_browser.py`)."""
    out = tmp_path / "results.json"
    code = main([*(i for i in BENCHMARKS if i not in BROWSER), "--quick", "--out", str(out)])
    assert code in (0, 1)  # goals are not judged here: quick figures mean nothing
    data = json.loads(out.read_text())
    machine = data["machine"]
    assert machine["cpu"] and machine["cores"] and len(machine["loadavg"]) == 3
    assert set(machine["versions"]) >= {"msgspec", "litestar", "litellm"}
    results = data["results"]
    groups = {r["id"].split("@")[0].split("-")[0] for r in results}
    assert groups == {f"B{i}" for i in (*range(1, 10), 11, 15, 16, 17, 18, 19)}
    for r in results:
        assert r["runnable"], (r["id"], r["note"])
        assert r["floor"] and r["subject"], r["id"]
        assert all(isinstance(v, float) and math.isfinite(v) for v in r["floor"] + r["subject"])
        assert r["checks"] or r["extra"].get("information"), r["id"]
    printed = capsys.readouterr().out
    assert "load average" in printed and "ratio med" in printed
