"""`harness replay`: its arguments checked here, the replay itself in `backend.replay`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from backend.cli.data import existing_data_dir
from backend.cli.errors import CliError, database_errors

if TYPE_CHECKING:  # imported where used: `harness --help` must not pay for them
    from shared_contracts.trace import AnyTraceEvent


def _recorded_turns(data_dir: Path, database_url: str | None, chat_id: str) -> list[int]:
    """The turns recorded in `chat_id`'s trace (raises InvalidId for a malformed id)."""
    import anyio

    from backend.server.stores import open_local_stores
    from shared_contracts.trace import MarkEvent

    async def read() -> list[AnyTraceEvent]:
        async with open_local_stores(data_dir, database_url, migrate_schema=False) as stores:
            return await stores.traces.read(chat_id)

    events = anyio.run(read)
    return [e.turn for e in events if isinstance(e, MarkEvent) and e.mark == "turn_started"]


def _check_replay_args(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> None:
    """Refuse arguments the replay engine would silently ignore or misread."""
    diff = args.ids[0] == "diff"
    if diff and (args.from_turn is not None or args.model or args.template):
        raise CliError("`replay diff A B` takes no --from-turn, --model or --template")
    if args.model and args.from_turn is None:
        raise CliError("--model is the fork's teacher: use it with --from-turn N")
    if args.template and not Path(args.template).is_file():
        raise CliError(f"--template {args.template}: no such file")
    turns: list[int] = []
    for chat_id in args.ids[1:] if diff else args.ids[:1]:
        turns = _recorded_turns(data_dir, database_url, chat_id)
        if not turns:
            where = (
                "the database (LH_DATABASE_URL)"
                if database_url
                else f"{data_dir}; a chat id is a file name in {data_dir / 'traces'} without .jsonl"
            )
            raise CliError(f"no recorded session {chat_id!r} in {where}")
    if args.from_turn is not None and not 1 <= args.from_turn <= max(turns):
        raise CliError(f"--from-turn {args.from_turn}: {args.ids[0]} has turns 1 to {max(turns)}")


def cmd_replay(args: argparse.Namespace) -> int:
    from backend.core.errors import HarnessError
    from backend.replay.cli import cli
    from backend.server.settings import load_settings

    settings = load_settings()
    url = settings.database_url
    data_dir = settings.data_dir if url else existing_data_dir(settings.data_dir)
    template = Path(args.template) if args.template else None
    try:
        with database_errors(settings.database_label):
            _check_replay_args(args, data_dir, url)
            return cli(data_dir, args.ids, args.from_turn, args.model, template, url)
    except HarnessError as exc:
        print(f"harness replay: {exc}", file=sys.stderr)
        return 2
