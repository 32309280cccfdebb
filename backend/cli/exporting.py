"""`harness export`: a learner's data taken out of LH_DATA_DIR (or the database) as an
archive, an Anki deck or a Markdown vault; the files are only read."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from backend.cli.data import existing_data_dir
from backend.cli.errors import CliError, database_errors
from backend.cli.whose import learner_argument, learner_data

if TYPE_CHECKING:  # imported where used: `harness --help` must not pay for them
    from backend.portability.export import ExportFormat
    from backend.server.settings import Settings
    from backend.server.stores import Stores

EXPORT_DETAILS = """harness export --out FILE.zip [--no-traces]   everything, to import elsewhere
harness export --anki FILE.apkg                an Anki deck of the graph's propositions
harness export --markdown DIR                  one note per node, an index per session

The archive holds chats, graph ledgers, jobs, materials and (unless --no-traces) the
sessions' traces, with a manifest of counts and a sha256 per file. A file given is
replaced whole once the export is written; a vault's DIR must be new or empty.
--learner USERNAME exports that account's learner (LH_AUTH=accounts) instead of the
local one: a learner's own data, handed over on request."""


def export_arguments(cmd: argparse.ArgumentParser) -> None:
    target = cmd.add_mutually_exclusive_group(required=True)
    target.add_argument("--out", metavar="FILE.zip", type=Path, help="the archive")
    target.add_argument("--anki", metavar="FILE.apkg", type=Path, help="an Anki deck")
    target.add_argument("--markdown", metavar="DIR", type=Path, help="a Markdown vault")
    cmd.add_argument(
        "--no-traces",
        dest="traces",
        action="store_false",
        help="leave the sessions' traces out of the archive (they let sessions be replayed)",
    )
    learner_argument(cmd)


def cmd_export(args: argparse.Namespace) -> int:
    import anyio

    from backend.core.errors import HarnessError
    from backend.server.settings import load_settings

    settings = load_settings()
    if settings.database_url is None:
        existing_data_dir(settings.data_dir)
    if not args.traces and args.out is None:
        raise CliError("--no-traces is for the archive (--out FILE.zip)")
    try:
        with database_errors(settings.database_label):
            summary = anyio.run(_export, settings, args)
    except HarnessError as exc:
        raise CliError(str(exc)) from None
    print(summary)
    return 0


async def _export(settings: Settings, args: argparse.Namespace) -> str:
    """From the learner's stores (PostgreSQL's with LH_DATABASE_URL, its schema not
    migrated; else the files, the graph read-only)."""
    async with learner_data(settings, getattr(args, "learner", None)) as data:
        return await _export_from(data.stores(), args)


async def _export_from(stores: Stores, args: argparse.Namespace) -> str:
    from backend.agent.extraction.channels import GraphReader
    from backend.portability.export import export_file
    from backend.portability.vault_files import vault_files, write_vault
    from backend.server.runtime import SystemClock

    snapshot = await GraphReader(stores.graph).snapshot()
    nodes = f"{len(snapshot.nodes)} node(s)"
    if args.markdown is not None:
        files = await vault_files(stores.chats, snapshot)
        write_vault(files, args.markdown)
        return f"exported {len(files)} note(s) ({nodes}) to {args.markdown}"
    kind: ExportFormat = "anki" if args.anki is not None else "archive"
    target: Path = args.anki if args.anki is not None else args.out
    exported = await export_file(stores, snapshot, kind, clock=SystemClock(), traces=args.traces)
    _write_whole(target, exported.data)
    what = "an Anki deck of" if kind == "anki" else "an archive with traces of"
    if kind == "archive" and not args.traces:
        what = "an archive without traces of"
    return f"exported {what} {nodes} to {target} ({len(exported.data):,} bytes)"


def _write_whole(target: Path, data: bytes) -> None:
    """`data` as `target`: written beside it, then renamed over it (never half a file)."""
    directory = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise CliError(f"{target} is a directory: give a file name")
    if not directory.is_dir():
        raise CliError(f"{directory} is not a directory: the export has nowhere to go")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
