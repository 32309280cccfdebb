"""Every golden session replays strictly (no network): same frames, same checkpoints.

A behaviour change fails here with the first divergence; after a deliberate change,
re-record with `.venv/bin/python -m tests.golden.record tests/golden` and review the diff.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from backend.replay.runner import run_replay
from backend.server.stores import build_stores
from backend.tracing.ports import read_expanded
from shared_contracts.tools import GradedOutput
from shared_contracts.trace import (
    AnyTraceEvent,
    CheckpointEvent,
    ExtractionEvent,
    JobTraceEvent,
    QuizEvent,
)

ROOT = Path(__file__).parent
GOLDENS = sorted(p for p in ROOT.iterdir() if (p / "traces").is_dir())


def test_there_are_at_least_three_goldens():
    assert {p.name for p in GOLDENS} >= {
        "lesson_python_lists",
        "wrong_answer_reteach",
        "job_and_extraction",
    }


@pytest.mark.parametrize("golden", GOLDENS, ids=[p.name for p in GOLDENS])
async def test_golden_replays_identically(golden: Path, tmp_path: Path):
    (trace,) = (golden / "traces").glob("*.jsonl")
    result = await run_replay(build_stores(golden), trace.stem, tmp_path / "replay")
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    assert result.frames > 100 and result.checkpoints >= 5
    assert result.shutdown_cut == []  # each golden ends quiet: nothing was cut at its end


def test_the_old_format_golden_has_none_of_the_newer_stored_forms():
    """It proves a trace written before blobs and streamed runs still replays (above)."""
    (trace,) = (ROOT / "wrong_answer_reteach" / "traces").glob("*.jsonl")
    text = trace.read_text("utf-8")
    for key in ('"refs"', '"blobs"', '"reused"', '"deltas"', '"chunk_texts"'):
        assert key not in text
    (newer,) = (ROOT / "lesson_python_lists" / "traces").glob("*.jsonl")
    assert '"deltas":["' in newer.read_text("utf-8")


def test_the_untyped_golden_holds_values_as_json_text():
    """It proves a trace written before the typed trace fields still replays (above): its
    questions, jobs, tool results and extraction are JSON text in string fields."""
    (trace,) = (ROOT / "job_and_extraction_untyped" / "traces").glob("*.jsonl")
    text = trace.read_text("utf-8")
    for key in ('"detail":"{', '"output":"{', '"plan_after":"{', '"extractor_output":"{'):
        assert key in text
    for key in ('"job":{', '"result":{', '"tree_after":{', '"extraction":{', '"input":{'):
        assert key not in text


async def test_an_untyped_trace_reads_as_the_typed_recorder_writes_it():
    """Every event of the untyped golden, read back, equals its re-recorded typed twin."""
    old, new = await _events("job_and_extraction_untyped"), await _events("job_and_extraction")
    assert [msgspec.to_builtins(e) for e in old] == [msgspec.to_builtins(e) for e in new]


async def _events(name: str) -> list[AnyTraceEvent]:
    golden = ROOT / name
    (trace,) = (golden / "traces").glob("*.jsonl")
    return read_expanded(await build_stores(golden).traces.read(trace.stem), trace.stem)


async def test_the_wrong_answer_golden_grades_wrong_then_reteaches():
    events = await _events("wrong_answer_reteach")
    graded = [e.output for e in events if isinstance(e, QuizEvent) and e.phase == "graded"]
    verdicts = [g.verdict.correct for g in graded if isinstance(g, GradedOutput)]
    assert verdicts[:2] == [False, True]


async def test_the_job_golden_delivers_jobs_and_runs_an_extraction():
    events = await _events("job_and_extraction")
    phases = {(e.job_id, e.phase) for e in events if isinstance(e, JobTraceEvent)}
    jobs = {job for job, _ in phases}
    assert jobs and all((j, p) in phases for j in jobs for p in ("submitted", "finished"))
    assert any(p == "delivered" for _, p in phases)
    (run,) = [e for e in events if isinstance(e, ExtractionEvent)]
    assert run.graph_hash_after and run.scope == f"extraction:{run.run_id}"
    last = [e for e in events if isinstance(e, CheckpointEvent)][-1]
    assert last.graph_hash == run.graph_hash_after
