"""Several processes on one database: turn claims and process locks as session advisory
locks, and a chat's frames fanned out with LISTEN/NOTIFY.

Each process keeps three connections of its own beside the pool:

    locks     session advisory locks (`pg_try_advisory_lock`): a chat's turn claim, a
              per-key process lock. A process that dies loses its connection, and the
              server releases its locks with it: no claim outlives its holder. Calls are
              serialised on this one connection (each is one short round trip).
    publish   `pg_notify` of queued frames, in the order they were published.
    listen    `LISTEN` on one channel; frames from other processes go to the learner's
              subscriber (a process skips its own).

A lost connection is replaced on the next use (the listener retries with a back-off);
meanwhile calls raise `DatabaseUnavailable`. After a new locks connection, the claims and
locks this process still holds are taken again (one another process took meanwhile is
logged: exclusion was lost for that key while the database was away).
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
from collections import Counter, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
import psycopg

from backend.core.ports import RemoteDelivery
from backend.store.errors import DatabaseError, DatabaseUnavailable
from backend.store.pg.database import PROBE_TIMEOUT_S, Connection, unavailable

log = logging.getLogger("harness.store")

CHANNEL = "harness_chats"
MAX_PAYLOAD_BYTES = 7900
"""NOTIFY's payload limit is 8,000 bytes: a bigger frame goes as "re-read the chat"."""
LOCK_POLL_S = (0.02, 0.5)
"""A process lock held elsewhere is tried again after 20 ms, doubling up to 0.5 s."""
LISTEN_RETRY_S = (0.2, 2.0)
OWN_CONNECTION: dict[str, Any] = {
    "autocommit": True,
    "connect_timeout": PROBE_TIMEOUT_S,
    "application_name": "learning-harness coordination",
}


class Notice(msgspec.Struct, frozen=True):
    """One published frame on the channel: origin process, learner, chat, frame or None."""

    o: str
    l: str  # noqa: E741 - payload field names are short: NOTIFY carries at most 8 kB
    c: str
    f: str | None = None
    n: int = 0
    """The publisher's sequence number: identical payloads in one transaction would be
    delivered once."""


_NOTICE = msgspec.json.Decoder(Notice)
_ENCODE = msgspec.json.Encoder().encode


_HELD_ELSEWHERE = """
SELECT EXISTS (
    SELECT 1 FROM pg_locks
    WHERE locktype = 'advisory' AND mode = 'ExclusiveLock' AND granted
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND classid = %s::bigint::oid AND objid = %s::bigint::oid AND objsubid = 1
      AND pid <> pg_backend_pid())
"""
"""A 64-bit advisory key shows in `pg_locks` as (classid, objid) = its high and low
halves, with objsubid 1."""


def lock_key(kind: str, learner_id: str, key: str) -> int:
    """A 64-bit advisory lock key for (kind, learner, key) (collisions: ~2^-64 a pair)."""
    digest = hashlib.blake2b(f"{kind}\0{learner_id}\0{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


def _typed(exc: psycopg.Error) -> DatabaseError:
    if unavailable(exc):
        return DatabaseUnavailable(f"database unavailable: {_one_line(exc)}")
    return DatabaseError(f"database error: {_one_line(exc)}")


class _OwnConnection:
    """One connection of this process's own, (re)opened on use, one statement at a time."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._conn: Connection | None = None
        self.lock = anyio.Lock()

    async def get(self) -> tuple[Connection, bool]:
        """The connection, and whether it is new (call with `lock` held)."""
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return self._conn, False
        self._conn = await psycopg.AsyncConnection.connect(self._url, **OWN_CONNECTION)
        return self._conn, True

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def drop(self) -> None:
        """Forget a connection that failed (closing it quietly)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                await conn.close()
            except psycopg.Error:
                pass


class LockSession:
    """Session advisory locks on this process's locks connection."""

    def __init__(self, url: str) -> None:
        self._conn = _OwnConnection(url)
        self._held: Counter[int] = Counter()
        self._shared: set[int] = set()

    async def try_lock(self, key: int) -> bool:
        taken = bool(await self._scalar("SELECT pg_try_advisory_lock(%s)", key))
        if taken:
            self._held[key] += 1
        return taken

    async def join(self, key: int) -> bool:
        """Hold `key` shared for the session's life; True if no other session held it."""
        alone = bool(await self._scalar("SELECT pg_try_advisory_lock(%s)", key))
        if alone:
            await self._scalar("SELECT pg_advisory_unlock(%s)", key)
        delay = LOCK_POLL_S[0]
        while not await self._scalar("SELECT pg_try_advisory_lock_shared(%s)", key):
            await anyio.sleep(delay)  # another process is joining: it lets go at once
            delay = min(delay * 2, LOCK_POLL_S[1])
        self._shared.add(key)
        return alone

    async def held_elsewhere(self, key: int) -> bool:
        """Whether another session holds `key` (exclusively) now."""
        unsigned = key & 0xFFFF_FFFF_FFFF_FFFF
        found = await self._scalar(_HELD_ELSEWHERE, unsigned >> 32, unsigned & 0xFFFF_FFFF)
        return bool(found)

    async def renew(self) -> None:
        """Reconnect now if the locks connection was lost, taking again what is held."""
        try:
            await self._scalar("SELECT 1")
        except DatabaseUnavailable:  # found lost (and dropped) just now: a new one
            await self._scalar("SELECT 1")

    async def unlock(self, key: int) -> None:
        """Release one hold of `key` (a lost connection has released it already)."""
        if self._held[key] <= 0:
            return
        self._held[key] -= 1
        if not self._held[key]:
            del self._held[key]
        try:
            await self._scalar("SELECT pg_advisory_unlock(%s)", key)
        except DatabaseUnavailable:
            pass  # the connection is gone, and the server released its locks with it

    async def close(self) -> None:
        await self._conn.close()

    async def _scalar(self, sql: str, *params: int) -> object:
        async with self._conn.lock:
            try:
                conn, new = await self._conn.get()
                if new and (self._held or self._shared):
                    await self._take_again(conn)
                cur = await conn.execute(sql, params)
                row = await cur.fetchone()
            except psycopg.Error as exc:
                await self._conn.drop()
                raise _typed(exc) from exc
        return row[0] if row is not None else None

    async def _take_again(self, conn: Connection) -> None:
        """A new connection holds nothing: take again what this process still holds."""
        for key in self._shared:
            await conn.execute("SELECT pg_try_advisory_lock_shared(%s)", (key,))
        for key, count in list(self._held.items()):
            for _ in range(count):
                cur = await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))
                row = await cur.fetchone()
                if row is None or not row[0]:
                    log.warning("[workers] lock %d was taken elsewhere while away", key)
                    break


class PgNotices:
    """This process's publisher and listener on `CHANNEL`, for every learner it serves."""

    def __init__(self, url: str) -> None:
        self.origin = f"{os.getpid()}-{secrets.token_hex(4)}"
        self._url = url
        self._publisher = _OwnConnection(url)
        self._queue: deque[str] = deque()
        self._wake = anyio.Event()
        self._seq = 0
        self._subscribers: dict[str, RemoteDelivery] = {}
        self.listening = anyio.Event()
        """Set once the listener's LISTEN is in place (tests wait for it)."""

    def publish(self, learner_id: str, chat_id: str, frame: str | None) -> None:
        self._seq += 1
        payload = _ENCODE(Notice(o=self.origin, l=learner_id, c=chat_id, f=frame, n=self._seq))
        if len(payload) > MAX_PAYLOAD_BYTES:
            payload = _ENCODE(Notice(o=self.origin, l=learner_id, c=chat_id, n=self._seq))
        self._queue.append(payload.decode())
        self._wake.set()

    @asynccontextmanager
    async def subscribed(self, learner_id: str, deliver: RemoteDelivery) -> AsyncIterator[None]:
        self._subscribers[learner_id] = deliver
        try:
            yield
        finally:
            if self._subscribers.get(learner_id) is deliver:
                del self._subscribers[learner_id]

    async def run(self) -> None:
        """Send and listen until cancelled."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._send_forever)
            await self._listen_forever()

    async def close(self) -> None:
        await self._publisher.close()

    async def _send_forever(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            batch = list(self._queue)
            self._queue.clear()
            if not batch:
                continue
            try:
                await self._send(batch)
            except psycopg.Error as exc:
                await self._publisher.drop()
                log.warning("[workers] %d frame(s) not fanned out: %s", len(batch), _one_line(exc))

    async def _send(self, batch: list[str]) -> None:
        async with self._publisher.lock:
            conn, _ = await self._publisher.get()
            async with conn.pipeline():
                for payload in batch:
                    await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))

    async def _listen_forever(self) -> None:
        delay = LISTEN_RETRY_S[0]
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self._url, **OWN_CONNECTION)
            except psycopg.Error as exc:
                log.debug("[workers] listener cannot connect: %s", _one_line(exc))
                await anyio.sleep(delay)
                delay = min(delay * 2, LISTEN_RETRY_S[1])
                continue
            delay = LISTEN_RETRY_S[0]
            try:
                await self._listen(conn)
            except psycopg.Error as exc:
                log.warning("[workers] listener lost its connection: %s", _one_line(exc))
            finally:
                with anyio.CancelScope(shield=True):
                    try:
                        await conn.close()
                    except psycopg.Error:
                        pass

    async def _listen(self, conn: Connection) -> None:
        await conn.execute(f"LISTEN {CHANNEL}")
        log.info("[workers] listening for the other processes' frames")
        self.listening.set()
        async for notify in conn.notifies():
            try:
                notice = _NOTICE.decode(notify.payload)
            except msgspec.DecodeError:
                log.warning("[workers] ignored a notice that does not decode")
                continue
            if notice.o == self.origin:
                continue
            deliver = self._subscribers.get(notice.l)
            if deliver is None:
                continue
            try:
                await deliver(notice.c, notice.f)
            except Exception as exc:  # one chat's delivery never stops the listener
                log.warning("[chat %s] a fanned-out frame was not delivered: %s", notice.c, exc)


class PgTurnClaims:
    """A learner's turn claims: one session advisory lock per chat."""

    def __init__(self, session: LockSession, learner_id: str) -> None:
        self._session = session
        self._learner = learner_id

    async def claim(self, chat_id: str) -> bool:
        return await self._session.try_lock(lock_key("turn", self._learner, chat_id))

    async def release(self, chat_id: str) -> None:
        await self._session.unlock(lock_key("turn", self._learner, chat_id))

    async def elsewhere(self, chat_id: str) -> bool:
        return await self._session.held_elsewhere(lock_key("turn", self._learner, chat_id))


class PgProcessLocks:
    """A learner's process locks: a session advisory lock per key, tried until free."""

    def __init__(self, session: LockSession, learner_id: str) -> None:
        self._session = session
        self._learner = learner_id

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock = lock_key("lock", self._learner, key)
        delay = LOCK_POLL_S[0]
        while not await self._session.try_lock(lock):
            await anyio.sleep(delay)
            delay = min(delay * 2, LOCK_POLL_S[1])
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                await self._session.unlock(lock)

    async def join(self) -> bool:
        return await self._session.join(lock_key("alive", self._learner, ""))


class PgFanOut:
    """A learner's frames to and from the other processes."""

    remote = True

    def __init__(self, notices: PgNotices, learner_id: str) -> None:
        self._notices = notices
        self._learner = learner_id

    def publish(self, chat_id: str, frame: str | None) -> None:
        self._notices.publish(self._learner, chat_id, frame)

    async def serve(self, deliver: RemoteDelivery) -> None:
        async with self._notices.subscribed(self._learner, deliver):
            await anyio.sleep_forever()


@asynccontextmanager
async def open_coordination(url: str) -> AsyncIterator[tuple[LockSession, PgNotices]]:
    """This process's locks session and notices (listening in the block's background)."""
    session = LockSession(url)
    notices = PgNotices(url)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(notices.run)
            try:
                yield session, notices
            finally:
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await session.close()
            await notices.close()
