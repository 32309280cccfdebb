"""AccountStore on PostgreSQL: the `accounts` and `sessions` tables (migration 0003)."""

from __future__ import annotations

from datetime import datetime
from typing import TypeVar

import msgspec
import psycopg.errors

from backend.core.errors import AlreadyExists, CorruptRecord
from backend.store.errors import DatabaseError
from backend.store.pg.database import Connection, JsonBytes, PgDatabase
from shared_contracts.accounts import Account, SignedIn

T = TypeVar("T")

_CREATE = "INSERT INTO accounts (username, learner_id, record) VALUES (%s, %s, %s)"
_FIND = "SELECT record FROM accounts WHERE username = %s"
_OPEN = """
INSERT INTO sessions (digest, learner_id, expires_at, record) VALUES (%s, %s, %s, %s)
ON CONFLICT (digest) DO UPDATE SET expires_at = EXCLUDED.expires_at, record = EXCLUDED.record
"""
_SESSION = "SELECT record FROM sessions WHERE digest = %s"
_CLOSE = "DELETE FROM sessions WHERE digest = %s"
_CLOSE_EXPIRED = "DELETE FROM sessions WHERE expires_at <= %s"


class PgAccountStore:
    """Every account of the database (accounts are not any one learner's rows)."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db
        self._encoder = msgspec.json.Encoder()
        self._accounts = msgspec.json.Decoder(Account)
        self._sessions = msgspec.json.Decoder(SignedIn)

    async def create(self, account: Account) -> None:
        params = (account.username, account.learner_id, JsonBytes(self._encoder.encode(account)))

        async def insert(conn: Connection) -> None:
            await conn.execute(_CREATE, params)

        try:
            await self._db.run(insert, retry=False)
        except DatabaseError as exc:
            if isinstance(exc.__cause__, psycopg.errors.UniqueViolation):
                raise AlreadyExists(f"account {account.username!r} already exists") from None
            raise

    async def find(self, username: str) -> Account | None:
        raw = await self._one(_FIND, username)
        return None if raw is None else _decode(self._accounts, raw, "account")

    async def open_session(self, digest: str, session: SignedIn) -> None:
        data = JsonBytes(self._encoder.encode(session))
        params = (digest, session.learner_id, session.expires_at, data)

        async def upsert(conn: Connection) -> None:
            await conn.execute(_OPEN, params)

        await self._db.run(upsert, retry=False)

    async def session(self, digest: str) -> SignedIn | None:
        raw = await self._one(_SESSION, digest)
        return None if raw is None else _decode(self._sessions, raw, "session")

    async def close_session(self, digest: str) -> None:
        async def delete(conn: Connection) -> None:
            await conn.execute(_CLOSE, (digest,))

        await self._db.run(delete, retry=False)

    async def close_expired(self, now: datetime) -> int:
        async def delete(conn: Connection) -> int:
            cur = await conn.execute(_CLOSE_EXPIRED, (now,))
            return cur.rowcount

        return await self._db.run(delete, retry=False)

    async def _one(self, query: str, key: str) -> bytes | None:
        async def read(conn: Connection) -> bytes | None:
            cur = await conn.execute(query, (key,))
            row = await cur.fetchone()
            return None if row is None else bytes(row[0])

        return await self._db.run(read, retry=True)


def _decode(decoder: msgspec.json.Decoder[T], raw: bytes, what: str) -> T:
    try:
        return decoder.decode(raw)
    except msgspec.DecodeError as exc:
        raise CorruptRecord(f"{what} row", str(exc)) from exc
