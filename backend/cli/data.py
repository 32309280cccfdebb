"""The data dir, checked before a command touches it, and `harness verify` (of the files,
or of the database with `LH_DATABASE_URL`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from backend.cli.errors import CliError, database_errors


def _not_a_file(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise CliError(f"LH_DATA_DIR {path} is a file, not a directory; point it elsewhere")


def writable_data_dir(path: Path) -> Path:
    """`path`, created if missing; a CliError when the server could not write there."""
    import tempfile

    _not_a_file(path)
    verb = "written" if path.is_dir() else "created"
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as exc:
        raise CliError(
            f"the data dir {path} cannot be {verb} ({exc.strerror});"
            " set LH_DATA_DIR to a directory you can write"
        ) from None
    return path


def existing_data_dir(path: Path) -> Path:
    """`path` when it holds data to read; reading commands never create it."""
    _not_a_file(path)
    if not path.is_dir():
        raise CliError(
            f"there is no data dir at {path.resolve()} (LH_DATA_DIR): nothing recorded"
            " there yet. Take a lesson with `harness run`, or point LH_DATA_DIR at your data"
        )
    return path


def cmd_verify(args: argparse.Namespace) -> int:
    import anyio

    from backend.server.settings import load_settings
    from backend.server.stores import verify, verify_database_at

    settings = load_settings()
    if settings.database_url is None:
        problems = verify(existing_data_dir(settings.data_dir))
        where = str(settings.data_dir)
    else:
        with database_errors(settings.database_label):
            problems = anyio.run(verify_database_at, settings.database_url)
        where = settings.database_label
    for problem in problems:
        print(problem)
    print(f"verify: {len(problems)} problem(s) in {where}")
    return 1 if problems else 0
