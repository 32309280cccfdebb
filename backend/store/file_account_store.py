"""AccountStore on files: `accounts/users/<username>.json` (created exclusively) and
`accounts/sessions/<token digest>.json`, each written as every record is (atomic, durable)."""

from __future__ import annotations

import logging
import os
from datetime import datetime
from pathlib import Path

import anyio
import msgspec

from backend.core.errors import CorruptRecord, NotFound
from backend.store.errors import storage_error
from backend.store.fileops import FileOps, OsFileOps
from backend.store.paths import id_path
from backend.store.records import SUFFIX, RecordDir
from shared_contracts.accounts import Account, SignedIn

log = logging.getLogger("harness.store")

ACCOUNTS_DIR = "accounts"
"""Beside `learners/`: the data dir's accounts, never inside a learner's own directory."""


class FileAccountStore:
    """Accounts and sessions under `data_dir/accounts/` (one process writes them)."""

    def __init__(self, data_dir: Path, fs: FileOps | None = None) -> None:
        fs = fs or OsFileOps()
        root = os.path.join(data_dir, ACCOUNTS_DIR)
        # Small caches: a cached record is still checked against its file's identity.
        self._users = RecordDir(
            os.path.join(root, "users"), "account", Account, fs, cache_bytes=1 << 16
        )
        self._sessions = RecordDir(
            os.path.join(root, "sessions"), "session", SignedIn, fs, cache_bytes=1 << 16
        )

    async def create(self, account: Account) -> None:
        await self._users.save(account.username, account, exclusive=True)

    async def find(self, username: str) -> Account | None:
        try:
            return await self._users.load(username)
        except NotFound:
            return None

    async def open_session(self, digest: str, session: SignedIn) -> None:
        await self._sessions.save(digest, session)

    async def session(self, digest: str) -> SignedIn | None:
        try:
            return await self._sessions.load(digest)
        except NotFound:
            return None

    async def close_session(self, digest: str) -> None:
        path = self._sessions.path(digest)
        async with self._sessions.lock(digest):
            await anyio.to_thread.run_sync(self._unlink, path)

    async def close_expired(self, now: datetime) -> int:
        """Every session file read (one that does not decode is left, and logged), the
        expired ones removed."""
        sessions = await self._sessions.load_all(self._digest_and_session)
        expired = [digest for digest, s in sessions if s is not None and s.expires_at <= now]
        for digest in expired:
            await self.close_session(digest)
        return len(expired)

    def _digest_and_session(self, data: bytes, path: str) -> tuple[str, SignedIn | None]:
        digest = os.path.basename(path).removesuffix(SUFFIX)
        try:
            return digest, self._sessions.decode(data, path)
        except CorruptRecord as exc:
            log.warning("[accounts] left an unreadable session file: %s", exc)
            return digest, None

    def _unlink(self, path: str) -> None:
        try:
            self._sessions.fs.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise storage_error(exc, "unlink", path) from exc


class AccountReader:
    """The accounts under `data_dir/accounts/users/`, read without writing anything (no
    directory made, no stray temp file removed): what a reading command looks a learner up
    in, maybe beside a server writing the same files."""

    def __init__(self, data_dir: Path) -> None:
        self.directory = os.path.join(data_dir, ACCOUNTS_DIR, "users")

    def any(self) -> bool:
        """Whether this data dir has accounts at all (`LH_AUTH=accounts` made them)."""
        return os.path.isdir(self.directory)

    async def find(self, username: str) -> Account | None:
        path = id_path(self.directory, username, SUFFIX, "username")
        try:
            data = await anyio.to_thread.run_sync(Path(path).read_bytes)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise storage_error(exc, "read", path) from exc
        try:
            return msgspec.json.decode(data, type=Account)
        except msgspec.DecodeError as exc:
            raise CorruptRecord(path, str(exc)) from exc
