"""What a benchmark run shares: the mode (full or quick), rounds, a work dir, the data sets."""

from __future__ import annotations

import gc
import shutil
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from backend.core.ports import LEDGER_TYPES, LedgerBatch
from bench import synthetic
from bench.synthetic import Sizes

DECODERS = {name: msgspec.json.Decoder(t) for name, t in LEDGER_TYPES.items()}
QUICK_SIZES = {
    "full": Sizes.for_nodes(300),
    "1k": Sizes.for_nodes(120),
    "slice": Sizes.for_nodes(40),
}
FULL_SIZES = {"full": synthetic.FULL, "1k": synthetic.ONE_K, "slice": synthetic.SLICE}


@dataclass
class BenchContext:
    """`quick` shrinks every size and runs one round (the smoke test); data sets are built
    once per run under `workdir` and shared by the benchmarks."""

    workdir: Path
    quick: bool = False
    rounds: int = 7
    pin: bool = True
    _graphs: dict[str, tuple[Path, LedgerBatch]] = field(default_factory=dict)
    shared: dict[str, Any] = field(default_factory=dict)
    """What several benchmarks of a run share (e.g. the browser rows' servers)."""
    _closers: list[Callable[[], Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.quick:
            self.rounds = 1
            self.pin = False

    def on_close(self, stop: Callable[[], Any]) -> None:
        """Call `stop` when the run ends (last registered, first called)."""
        self._closers.append(stop)

    def close(self) -> None:
        """Stop what the run's benchmarks left running for each other."""
        while self._closers:
            self._closers.pop()()

    def sizes(self, name: str) -> Sizes:
        """The sizes of data set `name` ("full" = 10k/20k/100k, "1k", "slice" = 150)."""
        return (QUICK_SIZES if self.quick else FULL_SIZES)[name]

    def graph(self, name: str) -> tuple[Path, LedgerBatch]:
        """(data dir, lines) of data set `name`, generated and written on first use."""
        if name not in self._graphs:
            path = self.workdir / f"graph-{name}"
            batch = synthetic.build_graph_dir(path, self.sizes(name))
            self._graphs[name] = (path, batch)
        return self._graphs[name]

    def copy_graph(self, name: str, new_name: str) -> Path:
        """A private copy of data set `name`'s data dir (for benchmarks that append)."""
        source, _ = self.graph(name)
        target = self.workdir / new_name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)
        return target

    def scratch(self, name: str) -> Path:
        """An empty directory under the work dir."""
        path = self.workdir / name
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        return path


def decode_ledgers(data_dir: Path) -> int:
    """THE floor of graph reads: read each ledger file and decode it whole, typed."""
    total = 0
    for name, decoder in DECODERS.items():
        path = data_dir / "graph" / f"{name}.jsonl"
        if path.exists():
            total += len(decoder.decode_lines(path.read_bytes()))
    return total


def timed(fn: Callable[[], Any]) -> float:
    """Seconds one call of `fn` takes (after a full collection, so garbage is not billed)."""
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


async def atimed(fn: Callable[[], Awaitable[Any]]) -> float:
    """`timed` for a coroutine function."""
    gc.collect()
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start
