"""`harness migrate --to postgresql://...`: the data dir copied into the database."""

from __future__ import annotations

import argparse

from backend.cli.data import existing_data_dir
from backend.cli.errors import CliError, database_errors


def cmd_migrate(args: argparse.Namespace) -> int:
    import anyio

    from backend.core.errors import AlreadyExists
    from backend.server.settings import database_url, load_settings, without_password
    from backend.server.stores import (
        DataDirInUse,
        DataDirLock,
        DataDirUnsound,
        accounts_in,
        migrate_into_database,
    )

    settings = load_settings()
    url = database_url(args.to, "--to", "give the database to copy LH_DATA_DIR into")
    target = without_password(url)
    data_dir = existing_data_dir(settings.data_dir)
    try:
        with DataDirLock(data_dir), database_errors("the database"):
            moved = anyio.run(migrate_into_database, data_dir, url)
    except DataDirUnsound as exc:
        for problem in exc.problems:
            print(problem)
        print(f"migrate: {len(exc.problems)} problem(s) in {data_dir}: nothing was copied")
        return 1
    except (AlreadyExists, DataDirInUse) as exc:
        raise CliError(str(exc)) from None
    for m in moved:
        print(
            f"learner {m.learner}: {m.chats} chat(s), {m.jobs} job(s), "
            f"{m.ledger_lines} ledger line(s), {m.trace_events} trace event(s), "
            f"{m.materials} material(s)"
        )
    accounts = accounts_in(data_dir)
    if accounts:
        print(f"{accounts} account(s) (sessions are not moved: learners sign in again)")
    print(f"migrate: {data_dir} copied, read back equal, verify clean in {target}")
    print("set LH_DATABASE_URL to that URL to serve from the database; the files are unchanged")
    return 0
