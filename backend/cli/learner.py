"""`harness graph` and `harness review`: the learner's graph and what to study, as of a
moment, read from LH_DATA_DIR or the database (never written)."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from backend.cli.data import existing_data_dir
from backend.cli.errors import CliError, database_errors
from backend.cli.whose import learner_argument, learner_data

if TYPE_CHECKING:  # imported where used: `harness --help` must not pay for them
    from backend.agent.extraction.channels import GraphReader
    from backend.server.settings import Settings
    from shared_contracts.graph import GraphStats
    from shared_contracts.learner import ReviewQueue

T = TypeVar("T")

REASONS = {
    "confidently_wrong": "sure, but wrong",
    "misconception_open": "mix-up",
    "due": "due",
    "prerequisite_at_risk": "prerequisite",
}


def moment_argument(text: str | None) -> datetime | None:
    """`--as-of`, parsed as the HTTP routes parse `as_of`; a CliError saying what it takes."""
    from backend.core.errors import InvalidMoment
    from backend.core.moments import parse_moment

    if text is None:
        return None
    try:
        return parse_moment(text)
    except InvalidMoment as exc:
        raise CliError(f"--as-of: {exc}") from None


@asynccontextmanager
async def graph_reader(
    settings: Settings, learner: str | None = None
) -> AsyncIterator[GraphReader]:
    """The learner's graph as the server reads it (the files of LH_DATA_DIR, or the database
    with LH_DATABASE_URL, never migrated from here): the local learner's, or with `learner`
    that account's. With LH_DESIRED_RETENTION, as of the system clock's now by default (the
    bench's simulated clock is the server's alone). Reads only: a torn or corrupt tail stays
    for `verify` to report."""
    from backend.agent.extraction.channels import GraphReader
    from backend.core.memory import MemoryPolicy
    from backend.server.runtime import SystemClock

    policy = MemoryPolicy(desired_retention=settings.desired_retention)
    if settings.database_url is None:
        existing_data_dir(settings.data_dir)
    async with learner_data(settings, learner) as data:
        yield GraphReader(data.graph(), clock=SystemClock(), policy=policy)


def _read(read: Callable[[GraphReader], Awaitable[T]], learner: str | None) -> T:
    """`read` run over the learner's graph; a database that cannot be reached is one line."""
    import anyio

    from backend.server.settings import load_settings

    settings = load_settings()
    if settings.database_url is None:
        existing_data_dir(settings.data_dir)  # checked before anything is opened

    async def run() -> T:
        async with graph_reader(settings, learner) as reader:
            return await read(reader)

    with database_errors(settings.database_label):
        return anyio.run(run)


def cmd_graph(args: argparse.Namespace) -> int:
    as_of = moment_argument(getattr(args, "as_of", None))

    async def stats(reader: GraphReader) -> GraphStats:
        return (await reader.snapshot(as_of)).stats

    s = _read(stats, getattr(args, "learner", None))
    print(f"nodes {s.nodes}  edges {s.edges}  events {s.events}  sessions {s.sessions}")
    for state, count in sorted(s.by_state.items()):
        print(f"  {state:<14}{count}")
    if s.unattributed_probes:
        print(f"  unattributed probes: {s.unattributed_probes}")
    if not s.nodes:
        print("the graph is empty: a lesson adds to it (`harness run`, then take one)")
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    import msgspec

    as_of = moment_argument(args.as_of)

    async def queue(reader: GraphReader) -> ReviewQueue:
        return await reader.review(as_of, limit=args.limit)

    review = _read(queue, args.learner)
    if args.json:
        print(msgspec.json.encode(review).decode())
        return 0
    print(_render(review))
    return 0


def _render(review: ReviewQueue) -> str:
    when = review.as_of.strftime("%Y-%m-%d %H:%M %Z").strip()
    if not review.items:
        return f"nothing to review as of {when}"
    shown = f" (the first {len(review.items)})" if len(review.items) < review.total else ""
    lines = [f"to review as of {when}: {review.total} item(s){shown}"]
    for item in review.items:
        recall = "" if item.retrievability is None else f", recall {item.retrievability:.0%}"
        lines.append(f"{item.priority:>3}. [{REASONS[item.reason]}{recall}] {item.statement}")
        lines.append(f"     {item.detail}")
    return "\n".join(lines)


def graph_arguments(graph: argparse.ArgumentParser) -> None:
    graph.add_argument("--as-of", metavar="ISO", help="as of this moment (default: now)")
    learner_argument(graph)


def review_arguments(review: argparse.ArgumentParser) -> None:
    review.add_argument("--as-of", metavar="ISO", help="as of this moment (default: now)")
    review.add_argument("--json", action="store_true", help="the ReviewQueue as JSON")
    review.add_argument(
        "--limit", type=_positive, default=50, metavar="N", help="at most N items (default 50)"
    )
    learner_argument(review)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a whole number of 1 or more, got {text!r}")
    return int(text)
