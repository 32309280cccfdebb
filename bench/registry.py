"""The benchmarks by id, in run order (each group module is imported only when run)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from bench.context import BenchContext
from bench.harness import Result

BENCHMARKS: dict[str, tuple[str, str]] = {
    "B1": ("bench.graph_bench", "bench_b1"),
    "B2": ("bench.graph_bench", "bench_b2"),
    "B3": ("bench.transport_bench", "bench_b3"),
    "B4": ("bench.transport_bench", "bench_b4"),
    "B5": ("bench.load_bench", "bench_b5"),
    "B6": ("bench.memory_bench", "bench_b6"),
    "B7": ("bench.context_bench", "bench_b7"),
    "B8": ("bench.import_bench", "bench_b8"),
    "B9": ("bench.graph_bench", "bench_b9"),
    "B11": ("bench.workers_bench", "bench_b11"),
    "B12": ("bench.browser_bench", "bench_b12"),
    "B13": ("bench.browser_bench", "bench_b13"),
    "B14": ("bench.browser_bench", "bench_b14"),
    "B15": ("bench.startup_bench", "bench_b15"),
    "B16": ("bench.graph_bench", "bench_b16"),
    "B17": ("bench.graph_bench", "bench_b17"),
    "B18": ("bench.materials_bench", "bench_b18"),
    "B19": ("bench.materials_bench", "bench_b19"),
}


BROWSER = frozenset({"B12", "B13", "B14"})
"""Rows that drive headless Chromium through the Reflex UI (their smoke test is a browser
test: it compiles the UI)."""


def load(bench_id: str) -> Callable[[BenchContext], list[Result]]:
    """The function of benchmark `bench_id` (e.g. "B3"); `KeyError` for an unknown id."""
    module, name = BENCHMARKS[bench_id]
    return getattr(import_module(module), name)
