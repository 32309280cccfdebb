"""`harness import`: an archive of `harness export` brought back into LH_DATA_DIR (or the
database), checked whole before anything is written."""

from __future__ import annotations

import argparse
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from backend.cli.data import writable_data_dir
from backend.cli.errors import CliError, database_errors

if TYPE_CHECKING:  # imported where used: `harness --help` must not pay for them
    from collections.abc import AsyncIterator

    from backend.core.portability.records import LearnerData
    from backend.portability.archive import ImportReport
    from backend.server.settings import Settings
    from backend.server.stores import Stores

IMPORT_DETAILS = """Checks the whole archive before writing anything (its version, every
member's size, sha256 and records); a refused archive leaves LH_DATA_DIR as it was. Into a
data dir that holds data it refuses unless --merge: a merge adds what is not there yet, so
importing the same archive twice writes nothing the second time. Refused while a
server runs on the data dir: stop it first."""


def import_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("archive", metavar="FILE.zip", type=Path, help="an archive of harness export")
    cmd.add_argument(
        "--merge", action="store_true", help="add to a data dir that holds data already"
    )


@asynccontextmanager
async def _writing_stores(settings: Settings) -> AsyncIterator[Stores]:
    """The local learner's stores to write: PostgreSQL's with LH_DATABASE_URL (its schema
    migrated), else the files, locked against a live server for the block."""
    from backend.server.stores import DataDirLock, build_stores, open_local_stores

    url = settings.database_url
    if url is not None:
        async with open_local_stores(settings.data_dir, url, migrate_schema=True) as stores:
            yield stores
    else:
        with DataDirLock(writable_data_dir(settings.data_dir)):
            yield build_stores(settings.data_dir)


def cmd_import(args: argparse.Namespace) -> int:
    import anyio

    from backend.core.errors import HarnessError
    from backend.portability.archive import import_archive, read_archive
    from backend.server.settings import load_settings

    settings = load_settings()
    archive: Path = args.archive
    if not archive.is_file():
        raise CliError(f"{archive}: no such file")

    async def write(incoming: LearnerData) -> ImportReport:
        async with _writing_stores(settings) as stores:
            return await import_archive(stores, incoming, merge=args.merge)

    try:
        with archive.open("rb") as source:
            incoming = read_archive(source)  # every check passes before the data is touched
        with database_errors(settings.database_label):
            report = anyio.run(write, incoming)
    except HarnessError as exc:
        raise CliError(f"{archive}: {exc}") from None
    where = settings.database_label if settings.database_url else str(settings.data_dir)
    print(_imported(report, where))
    return 0


def _imported(report: ImportReport, where: str) -> str:
    from backend.core.portability.layout import LEDGERS

    kinds = ("chats", "jobs", "materials", "traces")
    written = ", ".join(f"{report.written.get(k, 0)} {k}" for k in kinds)
    lines = sum(report.written.get(name, 0) for name in LEDGERS)
    if report.merged:
        return (
            f"merged into {where}: wrote {written}, {lines} graph line(s);"
            " the rest was there already"
        )
    return f"imported into {where}: {written}, {lines} graph line(s)"
