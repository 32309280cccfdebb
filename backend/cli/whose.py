"""`--learner USERNAME`: whose data a reading command reads (`graph`, `review`, `export`):
the local learner's by default, or an account's (`LH_AUTH=accounts`), on files or on the
database. The one place a command looks a learner up; nothing is written on the way."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from backend.cli.errors import CliError

if TYPE_CHECKING:  # imported where used: `harness --help` must not pay for them
    from backend.accounts.service import FindsAccounts
    from backend.core.ports import GraphStore
    from backend.server.settings import Settings
    from backend.server.stores import Stores

LEARNER_HELP = (
    "the learner of this account (LH_AUTH=accounts), by username; default: the local learner"
)


def learner_argument(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--learner", metavar="USERNAME", help=LEARNER_HELP)


@dataclass(frozen=True)
class LearnerData:
    """One learner's data to read: the graph alone, or every store (on files the graph is
    opened read-only either way)."""

    graph: Callable[[], GraphStore]
    stores: Callable[[], Stores]


@asynccontextmanager
async def learner_data(settings: Settings, username: str | None) -> AsyncIterator[LearnerData]:
    """The local learner's data, or with `username` its account's learner's (the name
    normalised as sign-in does), from LH_DATA_DIR or LH_DATABASE_URL (its schema not
    migrated). No accounts, or none by that name: a CliError, before anything is opened.
    A learner signed up with nothing recorded has no directory yet, and gets none here."""
    from backend.server.stores import (
        AccountReader,
        export_stores,
        learner_root,
        open_store_factory,
        read_graph,
    )

    data_dir, url = settings.data_dir, settings.database_url
    if not url:
        accounts = AccountReader(data_dir)
        if username is not None and not accounts.any():
            raise CliError(f"--learner {username}: {data_dir} holds no accounts (LH_AUTH=accounts)")
        root = learner_root(data_dir, await _learner(accounts, username))
        if root.is_dir():
            yield LearnerData(lambda: read_graph(root), lambda: export_stores(root))
            return
        with tempfile.TemporaryDirectory() as empty:  # signed up, nothing recorded yet
            yield LearnerData(lambda: read_graph(root), lambda: export_stores(Path(empty)))
        return
    async with open_store_factory(data_dir, url, migrate_schema=False) as factory:
        stores = factory.for_learner(await _learner(factory.accounts, username))
        yield LearnerData(lambda: stores.graph, lambda: stores)


async def _learner(accounts: FindsAccounts, username: str | None) -> str:
    """The learner id `username` signs in as (the local learner's without one)."""
    from backend.accounts.service import find_account, normal_username
    from backend.core.errors import StorageError
    from backend.server.stores import LOCAL_LEARNER

    if username is None:
        return LOCAL_LEARNER
    try:
        account = await find_account(accounts, username)
    except StorageError as exc:  # an unreadable account file: `harness verify` names it too
        raise CliError(f"--learner {username}: {exc}") from None
    if account is None:
        raise CliError(f"--learner {username}: no account is named {normal_username(username)!r}")
    return account.learner_id
