"""`python -m bench.pedagogy --quick`: two simulated learners take a lesson on a real
`harness serve` and live three simulated days. Asserts the machinery (frames, simulated
clock, scoring, outputs) end to end — never the goals, which a run this small cannot judge."""

from __future__ import annotations

import json
from pathlib import Path

from bench.pedagogy.__main__ import main


def test_a_quick_run_drives_real_sessions_on_simulated_time_and_scores_them(tmp_path: Path):
    out, png = tmp_path / "pedagogy.json", tmp_path / "pedagogy.png"
    status = main(["--quick", "--out", str(out), "--plot", str(png)])
    document = json.loads(out.read_text())
    scores = {s["id"]: s for s in document["scores"]}
    assert status == (0 if all(s["passed"] for s in scores.values()) else 1)
    assert list(scores) == ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6"]
    for score in scores.values():
        assert score["available"] or score["value"].startswith("not available yet (needs ")
    assert scores["Q1"]["available"] and scores["Q1"]["figures"]["samples"] == 2 * 3 * 2
    assert set(scores["Q1"]["figures"]["accuracy_by_day"]) == {"0", "3"}

    learners = document["learners"]
    assert [(x["profile"], x["seed"]) for x in learners] == [
        ("calibrated", 2026),
        ("overconfident", 3026),
    ]
    for learner in learners:
        frames = learner["frames"]
        assert frames["question"] >= 3 and frames["verdict"] >= 3  # every node was quizzed
        assert learner["answers"] == frames["verdict"]
        # It read each node's teaching in the tutor's words, and a re-teach per miss.
        read = learner["lesson_texts_read"]
        assert read["teach"] == 3 and read.get("reteach", 0) <= learner["answers"] - 3
        # The server stamped the lesson at the simulated day 0, 09:00 and each review at
        # 18:00 and a minute a day — its clock is ours.
        lesson, *reviews = [t[:16] for t in learner["server_chat_times"]]
        assert lesson == "2031-01-06T09:00"
        assert {t[:10]: t[11:] for t in reviews}.items() <= {
            "2031-01-06": "18:00",
            "2031-01-07": "18:01",
            "2031-01-08": "18:02",
        }.items()
        # Each first probe of a node in a review has the harness's memory from before it.
        rows = learner["review_points"]["rows"]
        assert len(rows) <= learner["reviews"]["harness"]
        assert all(0.0 <= row[2] <= 1.0 and row[4] >= 0.0 for row in rows)
        assert learner["reviews"]["fixed"] == 2 * 3  # days 1 and 3, three concepts
    curves = document["retention_mean"]
    assert set(curves) == {"none", "fixed", "harness"} and len(curves["none"]) == 4
    assert curves["fixed"][3] >= curves["none"][3]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
