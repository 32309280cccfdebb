"""Moving a file data dir into PostgreSQL (`harness migrate --to postgresql://...`): read
and verify every learner's files, copy them all in one transaction, read them back and
compare, verify the database. The files are only read."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import msgspec

from backend.core.errors import AlreadyExists, StorageError
from backend.core.ids import is_valid_id
from backend.store.invariants import LearnerData
from backend.store.pg.database import PgDatabase
from backend.store.pg.importer import import_learners
from backend.store.pg.pg_account_store import PgAccountStore
from backend.store.pg.pg_verify import read_learner, verify_database
from backend.store.verify import read_data_dir
from shared_contracts.accounts import Account

LEARNERS_DIR = "learners"
ACCOUNTS_DIR = os.path.join("accounts", "users")


class DataDirUnsound(StorageError):
    """The data dir has problems `harness verify` reports; nothing was copied."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(f"the data dir has {len(problems)} problem(s); nothing was copied")
        self.problems = problems


@dataclass(frozen=True, slots=True)
class Moved:
    """What was copied for one learner (and read back equal)."""

    learner: str
    chats: int
    jobs: int
    ledger_lines: int
    trace_events: int
    materials: int = 0


def learner_roots(data_dir: Path, local: str) -> dict[str, Path]:
    """Each learner's root: `data_dir` for the local learner, `learners/<id>/` for others."""
    roots = {local: Path(data_dir)}
    others = Path(data_dir) / LEARNERS_DIR
    if others.is_dir():
        for name in sorted(os.listdir(others)):
            if is_valid_id(name) and name != local and (others / name).is_dir():
                roots[name] = others / name
    return roots


async def move_data_dir(data_dir: Path, db: PgDatabase, local: str) -> list[Moved]:
    """Copy every learner under `data_dir` into `db`. `DataDirUnsound` (nothing copied)
    if the files do not verify; `AlreadyExists` if a learner already has rows; a
    `StorageError` if what reads back differs or the database does not verify."""
    contents: dict[str, LearnerData] = {}
    accounts, problems = read_accounts(data_dir)
    for learner, root in learner_roots(data_dir, local).items():
        data, found = read_data_dir(root)
        contents[learner] = data
        prefix = "" if learner == local else f"{LEARNERS_DIR}/{learner}/"
        problems += [prefix + p for p in found]
    if problems:
        raise DataDirUnsound(problems)
    await import_learners(db, contents)
    for learner, data in contents.items():
        back, found = await read_learner(db, learner)
        if found or back != data:
            raise StorageError(f"learner {learner}: what the database holds differs from the files")
    found = await verify_database(db)
    if found:
        raise StorageError("the database does not verify after the copy: " + "; ".join(found))
    await copy_accounts(db, accounts)
    return [_moved(learner, data) for learner, data in contents.items()]


def read_accounts(data_dir: Path) -> tuple[list[Account], list[str]]:
    """Every account under `accounts/users/` (`LH_AUTH=accounts`), and the problems: a file
    that does not decode, or names another username or an invalid learner id. Signed-in
    sessions are not moved: learners sign in again."""
    users = Path(data_dir) / ACCOUNTS_DIR
    accounts: list[Account] = []
    problems: list[str] = []
    names = sorted(os.listdir(users)) if users.is_dir() else []
    for name in (n for n in names if n.endswith(".json")):
        where = f"{ACCOUNTS_DIR}/{name}"
        try:
            account = msgspec.json.decode((users / name).read_bytes(), type=Account)
        except (OSError, msgspec.DecodeError) as exc:
            problems.append(f"{where}: {exc}")
            continue
        if account.username != name.removesuffix(".json") or not is_valid_id(account.learner_id):
            problems.append(f"{where}: username or learner id does not match the file")
            continue
        accounts.append(account)
    return accounts, problems


async def copy_accounts(db: PgDatabase, accounts: list[Account]) -> None:
    """Each account into `db`; one already there and equal is left as it is (a re-run)."""
    store = PgAccountStore(db)
    for account in accounts:
        try:
            await store.create(account)
        except AlreadyExists:
            if await store.find(account.username) != account:
                raise


def _moved(learner: str, data: LearnerData) -> Moved:
    return Moved(
        learner=learner,
        chats=len(data.chats),
        jobs=len(data.jobs),
        ledger_lines=sum(len(lines) for lines in data.ledgers.values()),
        trace_events=sum(len(events) for events in data.traces.values()),
        materials=len(data.materials),
    )
