"""B8: import time of the CLI, the core and the merger, each in a fresh interpreter.

Each import is timed inside its own new `python` process (interpreter start excluded),
interleaved with `import litestar` (the floor) round by round. The child also reports
whether litellm got imported: it must stay lazy.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.context import BenchContext
from bench.harness import Check, Result

MS = 1000.0
ROOT = Path(__file__).resolve().parents[1]
CORE = (
    "backend.core.errors, backend.core.ids, backend.core.graph, backend.core.graph_context, "
    "backend.core.graph_probes, backend.core.evidence_gate, backend.core.pending, "
    "backend.core.phases, backend.core.plan_tree, backend.core.questions, "
    "backend.core.record_ops, backend.core.transcript, backend.core.views, "
    "backend.core.ports"
)
SUBJECTS = (
    ("cli", "backend.cli"),
    ("core", CORE),
    ("merger", "backend.agent.extraction.pipeline"),
)
FLOOR = "litestar"
_PROBE = (
    "import sys, time, json\n"
    "t = time.perf_counter()\n"
    "import {modules}\n"
    "d = time.perf_counter() - t\n"
    "print(json.dumps({{'s': d, 'litellm': 'litellm' in sys.modules}}))\n"
)


def import_time(modules: str) -> tuple[float, bool]:
    """(seconds to import `modules` in a fresh interpreter, whether litellm was imported)."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(modules=modules)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=120,
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return float(data["s"]), bool(data["litellm"])


def bench_b8(ctx: BenchContext) -> list[Result]:
    """One row per subject: its import time / `import litestar`, both in fresh processes."""
    for modules in (FLOOR, *(m for _, m in SUBJECTS)):
        import_time(modules)  # warm the bytecode and page caches once, untimed
    floors: list[float] = []
    times: dict[str, list[float]] = {name: [] for name, _ in SUBJECTS}
    pulled: dict[str, bool] = {name: False for name, _ in SUBJECTS}
    for index in range(ctx.rounds):
        order = list(SUBJECTS) if index % 2 == 0 else list(reversed(SUBJECTS))
        if index % 2 == 0:
            floors.append(import_time(FLOOR)[0] * MS)
        for name, modules in order:
            seconds, litellm = import_time(modules)
            times[name].append(seconds * MS)
            pulled[name] = pulled[name] or litellm
        if index % 2 == 1:
            floors.append(import_time(FLOOR)[0] * MS)
    results = []
    for name, modules in SUBJECTS:
        row = Result(
            id=f"B8-{name}",
            what=f"import {modules if name != 'core' else 'backend.core.*'}",
            unit="ms",
            floor_label="import litestar (fresh interpreter)",
            floor=floors,
            subject=times[name],
            goal="≤ 2× floor, litellm not imported",
            extra={"imports_litellm": pulled[name]},
        )
        row.checks = [
            Check("ratio", row.ratio_median, 2.0),
            Check("litellm imported", float(pulled[name]), 0.0),
        ]
        results.append(row)
    return results
