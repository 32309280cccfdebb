"""`python -m bench.pedagogy` (`make pedagogy`): simulated learners take real sessions on
a real `harness serve`; Q1–Q6 score what the harness believes against their hidden truth.

Exit status: 0 when every score meets its goal; 1 when any misses or is not available yet
(after the table, `bench/pedagogy.json` and the plot are written); 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from bench.machine import describe, machine_info
from bench.pedagogy.learner import PROFILES, Parameters, Profile
from bench.pedagogy.recall_score import q4
from bench.pedagogy.report import mean_curves, plot, table, write_json
from bench.pedagogy.scores import Score, q1, q2, q3, q5, q6
from bench.pedagogy.tracks import LearnerResult, Plan, run_learner
from bench.pedagogy.whatif import rating_maps
from bench.pedagogy.world import World, load_world

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE.parent / "pedagogy.json"
DEFAULT_PLOT = HERE.parent / "pedagogy.png"
SAMPLE_DAYS = (0, 7, 14, 30, 60)
SEED = 2026


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.pedagogy", description=__doc__)
    parser.add_argument("--learners", type=int, default=10, help="learners per profile (10)")
    parser.add_argument("--days", type=int, default=60, help="simulated days (60)")
    parser.add_argument("--seed", type=int, default=SEED, help=f"base seed ({SEED})")
    parser.add_argument("--workers", type=int, default=2, help="learners run at once (2)")
    parser.add_argument("--profiles", nargs="+", choices=PROFILES, default=list(PROFILES))
    parser.add_argument("--lessons", nargs="+", help="lesson ids (default: every lesson)")
    parser.add_argument(
        "--desired-retention",
        type=float,
        help="the harness's LH_DESIRED_RETENTION (default: its own, 0.9); to measure another",
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 1 learner of 2 profiles, 1 lesson, 3 days"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--plot", type=Path, default=DEFAULT_PLOT)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.quick:
        args.learners, args.days = 1, 3
        args.profiles = ["calibrated", "overconfident"]
        args.lessons = args.lessons or ["fractions"]
    world = load_world()
    lessons = tuple(args.lessons or [lesson.id for lesson in world.lessons])
    unknown = [x for x in lessons if x not in {lesson.id for lesson in world.lessons}]
    if unknown or args.learners < 1 or args.days < 1 or args.workers < 1:
        print(f"bad arguments: unknown lessons {unknown}" if unknown else "bad arguments")
        return 2
    samples = tuple(sorted({d for d in SAMPLE_DAYS if d <= args.days} | {args.days}))
    plan = Plan(lessons, args.days, samples, desired_retention=args.desired_retention)
    cohort = [
        (index, profile, args.seed + 1000 * p + index)
        for p, profile in enumerate(args.profiles)
        for index in range(args.learners)
    ]
    info = machine_info()
    print(describe(info), flush=True)
    started = time.perf_counter()
    results = anyio.run(_run_all, world, plan, cohort, args.workers)
    seconds = time.perf_counter() - started
    scores = score(results)
    print(table(scores))
    print(
        f"\n{len(results)} learners, {sum(r.sessions for r in results)} sessions, {seconds:.0f} s",
        flush=True,
    )
    curves = {p: [r.retention[p] for r in results] for p in ("none", "fixed", "harness")}
    write_json(args.out, _document(args, plan, info, results, scores, curves, seconds))
    reviews = {p: _mean([r.reviews.get(p, 0) for r in results]) for p in curves}
    plot(curves, reviews, len(results[0].concepts), args.plot, _title(results, plan))
    print(f"wrote {args.out} and {args.plot}")
    return 0 if all(s.passed for s in scores) else 1


async def _run_all(
    world: World, plan: Plan, cohort: list[tuple[int, Profile, int]], workers: int
) -> list[LearnerResult]:
    limiter = anyio.CapacityLimiter(workers)
    results: dict[int, LearnerResult] = {}
    with tempfile.TemporaryDirectory(prefix="pedagogy-") as tmp:

        async def one(slot: int, index: int, profile: Profile, seed: int) -> None:
            async with limiter:
                root = Path(tmp) / f"{profile}-{index}"
                results[slot] = await run_learner(world, plan, index, profile, seed, root)
                print(
                    f"  {profile} #{index} (seed {seed}): {results[slot].sessions} sessions",
                    flush=True,
                )

        async with anyio.create_task_group() as group:
            for slot, (index, profile, seed) in enumerate(cohort):
                group.start_soon(one, slot, index, profile, seed)
    return [results[slot] for slot in sorted(results)]


def score(results: list[LearnerResult]) -> list[Score]:
    missing: set[str] = set().union(*(r.missing for r in results))
    review = sorted(m for m in missing if "review" in m)
    verdicts: dict[str, list[str]] = {}
    for r in results:
        if r.calibration is not None:
            verdicts.setdefault(r.profile, []).append(r.calibration)
    horizon = {
        p: _mean([r.retention[p][-1] for r in results]) for p in ("none", "fixed", "harness")
    }
    reviews = {
        p: _mean([r.reviews.get(p, 0) for r in results]) for p in ("none", "fixed", "harness")
    }
    memory = sorted(m for m in missing if "memory" in m)
    q4_score = q4([p for r in results for p in r.pairs], memory + review)
    if q4_score.available:
        q4_score.figures["rating_maps"] = rating_maps(
            [
                (r.histories[p.node_id], p.as_of, p.correct, p.retrievability)
                for r in results
                for p in r.pairs
                if p.node_id in r.histories and p.as_of is not None
            ]
        )
    return [
        q1([s for r in results for s in r.samples]),
        q2([(r.seeded, r.final) for r in results], [_shown(r) for r in results]),
        q3([c for r in results for c in r.checks], review),
        q4_score,
        q5(verdicts, sorted(m for m in missing if "calibration" in m), _rated(results)),
        q6(horizon, reviews, review, _review_days(results)),
    ]


REVIEW_PERIODS = ((0, 1, "day 0"), (1, 8, "days 1–7"), (8, 31, "days 8–30"), (31, 10**6, "31+"))


def _review_days(results: list[LearnerResult]) -> dict[str, float]:
    """Review answers per learner, on average, by when they were given."""
    counts: Counter[str] = Counter()
    for r in results:
        for a in r.records:
            if a.review:
                counts.update(label for lo, hi, label in REVIEW_PERIODS if lo <= a.at < hi)
    return {label: counts[label] / max(len(results), 1) for *_, label in REVIEW_PERIODS}


def _shown(result: LearnerResult) -> dict[str, int]:
    """concept → how many of the learner's answers showed its named belief."""
    return dict(Counter(a.concept for a in result.records if a.shows_belief and a.concept))


def _rated(results: list[LearnerResult]) -> dict[str, list[list[tuple[float, bool]]]]:
    """profile → each learner's graded answers that carry a confidence."""
    rated: dict[str, list[list[tuple[float, bool]]]] = {}
    for r in results:
        answers = [(a.confidence, a.correct) for a in r.records if a.confidence is not None]
        rated.setdefault(r.profile, []).append(answers)
    return rated


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _title(results: list[LearnerResult], plan: Plan) -> str:
    return (
        f"Pedagogy bench: {len(results)} simulated learners, lessons {', '.join(plan.lessons)}"
        f" on day 0, {plan.days} days"
    )


def _commit() -> str:
    """The commit measured, `-dirty` when the work tree had changes (outputs aside)."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=HERE, capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        outputs = [f":(top,exclude)bench/{name}" for name in ("pedagogy.json", "pedagogy.png")]
        changed = git("status", "--porcelain", "--", ":/", *outputs)
        return git("rev-parse", "--short", "HEAD") + ("-dirty" if changed else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _document(
    args: argparse.Namespace,
    plan: Plan,
    info: dict[str, object],
    results: list[LearnerResult],
    scores: list[Score],
    curves: dict[str, list[list[float]]],
    seconds: float,
) -> dict[str, Any]:
    return {
        "commit": _commit(),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(seconds, 1),
        "machine": info,
        "plan": {
            "lessons": list(plan.lessons),
            "days": plan.days,
            "sample_days": list(plan.sample_days),
            "fixed_days": list(plan.fixed_days),
            "learners_per_profile": args.learners,
            "profiles": list(args.profiles),
            "base_seed": args.seed,
            "workers": args.workers,
            "desired_retention": plan.desired_retention,
        },
        "learner_parameters": Parameters().__dict__,
        "scores": [s.to_json() for s in scores],
        "retention_mean": mean_curves(curves),
        "learners": [_learner(r) for r in results],
    }


def _learner(r: LearnerResult) -> dict[str, Any]:
    return {
        "seed": r.seed,
        "profile": r.profile,
        "index": r.index,
        "sessions": r.sessions,
        "answers": len(r.records),
        "seeded_beliefs": r.seeded,
        "calibration_verdict": r.calibration,
        "not_available": sorted(r.missing),
        "reviews": r.reviews,
        "review_points": {
            "fields": ["day", "kind", "retrievability", "stability", "elapsed", "correct", "mode"],
            "rows": [p.to_json() for p in r.pairs],
        },
        "retained_at_horizon": {p: c[-1] for p, c in r.retention.items()},
        "frames": dict(r.frames),
        "lesson_texts_read": dict(r.taught),
        "server_chat_times": r.server_times,
    }


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    sys.exit(main())
