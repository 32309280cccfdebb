"""`python -m bench [ids…] [--quick] [--rounds N] [--out PATH]`: run, print, save, judge.

Exit status: 0 when every selected benchmark ran and met its goals; 1 otherwise (after
everything was printed and saved); 2 for an unknown benchmark id.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")

from bench.context import BenchContext
from bench.harness import Result, exit_code, not_runnable, table
from bench.machine import describe, machine_info
from bench.registry import BENCHMARKS, load
from bench.wsclient import BUSY_RETRIES

DEFAULT_OUT = Path(__file__).resolve().parent / "results.json"


def _clean(value: object) -> object:
    """JSON without NaN (null instead)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def run(ids: list[str], *, quick: bool, rounds: int | None, out: Path) -> tuple[list[Result], dict]:
    """Run benchmarks `ids` in order; a benchmark that crashes is reported as not runnable."""
    info = machine_info()
    print(describe(info), flush=True)
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        ctx = BenchContext(Path(tmp), quick=quick)
        if rounds is not None and not quick:
            ctx.rounds = rounds
        try:
            _run_each(ctx, ids, results)
        finally:
            ctx.close()
        info["rounds"] = ctx.rounds
    info["loadavg_end"] = list(os.getloadavg())
    payload = {"machine": info, "quick": quick, "results": [r.to_json() for r in results]}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(_clean(payload), indent=2, ensure_ascii=False) + "\n")
    return results, info


def _run_each(ctx: BenchContext, ids: list[str], results: list[Result]) -> None:
    for bench_id in ids:
        started = time.perf_counter()
        print(f"running {bench_id} …", flush=True)
        try:
            got = load(bench_id)(ctx)
        except Exception as exc:
            traceback.print_exc()
            got = [not_runnable(bench_id, "crashed", f"{type(exc).__name__}: {exc}")]
        for result in got:
            result.extra["seconds"] = round(time.perf_counter() - started, 2)
            if BUSY_RETRIES[0]:
                result.extra["busy_retries"] = BUSY_RETRIES[0]
                result.note = (result.note + "; " if result.note else "") + (
                    f"{BUSY_RETRIES[0]} turn(s) refused as busy right after turn_finished (retried)"
                )
        BUSY_RETRIES[0] = 0
        results.extend(got)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "ids", nargs="*", help=f"benchmarks to run (default all: {' '.join(BENCHMARKS)})"
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round (smoke test)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per benchmark (≥ 7)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results JSON path")
    args = parser.parse_args(argv)
    ids = [i.upper() for i in args.ids] or list(BENCHMARKS)
    unknown = [i for i in ids if i not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {' '.join(unknown)}; known: {' '.join(BENCHMARKS)}")
        return 2
    if args.rounds is not None and args.rounds < 7 and not args.quick:
        print("--rounds must be at least 7 (use --quick for a smoke run)")
        return 2
    results, info = run(ids, quick=args.quick, rounds=args.rounds, out=args.out)
    print()
    print(describe(info))
    quick_note = " (quick: sizes shrunk, figures meaningless)" if args.quick else ""
    print(f"rounds: {info['rounds']}{quick_note}")
    print()
    print(table(results))
    code = exit_code(results)
    print(f"\nresults: {args.out}")
    print(
        "all goals met"
        if code == 0
        else "GOALS MISSED: " + " ".join(r.id for r in results if not r.passed)
    )
    return code


if __name__ == "__main__":
    sys.exit(main())
