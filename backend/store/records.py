"""A directory of JSON records, one file per id, each replaced atomically under a per-id lock."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Generic, TypeVar

import anyio
import anyio.to_thread
import msgspec

from backend.core.errors import AlreadyExists, CorruptRecord, NotFound, StorageError
from backend.store.atomic import remove_stray_tmp, replace_atomically
from backend.store.errors import storage_error
from backend.store.fileops import FileOps
from backend.store.keyed_locks import KeyedLocks
from backend.store.paths import id_path
from backend.store.record_cache import CacheView, FileIdentity, RecordCache

T = TypeVar("T", bound=msgspec.Struct)
R = TypeVar("R")

SUFFIX = ".json"


class RecordDir(Generic[T]):
    """Typed records in `directory/<id>.json`; the directory's stray tmp files go at open.
    Reads of an unchanged record are served from a `RecordCache` (see there)."""

    def __init__(
        self,
        directory: str,
        kind: str,
        type_: type[T],
        fs: FileOps,
        *,
        unverified: Callable[[T, T], T] | None = None,
        encode: Callable[[str, T], bytes] | None = None,
        cache_bytes: int,
        cache: CacheView[T] | None = None,
    ) -> None:
        """`unverified(old, new)`: the part of `new` that `old` (already known to read back)
        does not vouch for; an update checks only that part reads back, not the whole.
        `encode(id, record)`: the record's bytes (a faster equal of the plain encoder) for
        the updates that check only the unverified part.
        `cache_bytes`: how much (in file bytes) of recently used records stays decoded;
        `cache`: this directory's part of a cache shared with others (then `cache_bytes`
        is that cache's business)."""
        self.directory = directory
        self.kind = kind
        self.fs = fs
        self._encoder = msgspec.json.Encoder()
        self._decoder = msgspec.json.Decoder(type_)
        self._locks = KeyedLocks()
        self._cache: RecordCache[T] | CacheView[T] = (
            cache if cache is not None else RecordCache(cache_bytes)
        )
        self._unverified = unverified
        self._encode_update = encode or (lambda _id, record: self._encoder.encode(record))
        try:
            fs.makedirs(directory)
            remove_stray_tmp(fs, directory)
        except OSError as exc:
            raise storage_error(exc, "open", directory) from exc

    def path(self, record_id: object) -> str:
        """The file of a record; `InvalidId` for anything that is not a safe id."""
        return id_path(self.directory, record_id, SUFFIX, f"{self.kind} id")

    def lock(self, record_id: str) -> AbstractAsyncContextManager[None]:
        """Hold the lock serialising writes of one record (FIFO, so writes keep call
        order); the lock is dropped once no one holds or waits on it."""
        return self._locks.hold(record_id)

    @asynccontextmanager
    async def pinned(self, record_id: object) -> AsyncIterator[None]:
        """Keep the record's latest version cached for the block (see `RecordCache`)."""
        key = str(record_id)
        self.path(record_id)  # refuse a bad id here too
        self._cache.pin(key)
        try:
            yield
        finally:
            self._cache.unpin(key)

    def latest(self, record_id: object) -> T | None:
        """The record as last read or written, if in memory (see `RecordCache.latest`)."""
        self.path(record_id)  # refuse a bad id here too
        return self._cache.latest(str(record_id))

    async def load(self, record_id: object) -> T:
        """One record; `NotFound` if absent, `CorruptRecord` (naming the file) if undecodable.
        An unchanged record comes from the cache (a `stat` in place of a read and decode)."""
        path = self.path(record_id)
        key = str(record_id)
        cached = self._cached(key, path)
        if cached is not None:
            return cached
        identity, record = await anyio.to_thread.run_sync(self._load_sync, path)
        self._cache.put(key, identity, record)
        return record

    async def save(self, record_id: object, record: T, *, exclusive: bool = False) -> None:
        """Replace (or, with `exclusive`, create: `AlreadyExists` if taken) one record."""
        path = self.path(record_id)
        data, stored = self._encode_checked(record)
        async with self.lock(str(record_id)):
            await self._write(str(record_id), path, data, stored, exclusive)

    async def update(
        self, record_id: object, mutate: Callable[[T], T], get_id: Callable[[T], str]
    ) -> T:
        """Read-modify-write under the record's lock; `mutate` may not change the id.
        Returns the record as written (equal to what now reads back from disk)."""
        path = self.path(record_id)
        key = str(record_id)
        async with self.lock(key):
            cached = self._cached(key, path)
            if cached is None:
                _, current = await anyio.to_thread.run_sync(self._load_sync, path)
            else:
                current = cached
            new = mutate(current)
            if get_id(new) != key:
                raise StorageError(f"{self.kind} {record_id}: an update may not change the id")
            if self._unverified is None:
                data, stored = self._encode_checked(new)
            else:
                self._check(self._unverified(current, new))
                data, stored = self._encode_update(key, new), new
            await self._write(key, path, data, stored, False)
            return stored

    async def load_all(self, decode: Callable[[bytes, str], R]) -> list[R]:
        """Every record, decoded with `decode(data, path)` (`self.decode` for whole records)."""
        return await anyio.to_thread.run_sync(self._load_all_sync, decode)

    def _encode_checked(self, record: T) -> tuple[bytes, T]:
        """(the bytes, the record decoded back from them: exactly what a reader gets);
        `StorageError` for a record that would not read back (it would poison the disk)."""
        data = self._encoder.encode(record)
        return data, self._check_bytes(data)

    def _check(self, record: T) -> None:
        self._check_bytes(self._encoder.encode(record))

    def _check_bytes(self, data: bytes) -> T:
        try:
            return self._decoder.decode(data)
        except msgspec.DecodeError as exc:
            raise StorageError(f"refusing to write an unreadable {self.kind}: {exc}") from exc

    def _cached(self, key: str, path: str) -> T | None:
        """The cached record if the file is still the one it was read or written as. A
        `stat` in the event loop costs less than the thread hop a read needs."""
        try:
            identity = self.fs.identity(path)
        except OSError:
            return None  # the read reports it (NotFound, or a typed storage error)
        return self._cache.get(key, identity)

    async def _write(self, key: str, path: str, data: bytes, stored: T, exclusive: bool) -> None:
        """Write under the caller's lock; afterwards the cache holds `stored` for the new
        file, or (on any failure) nothing for this record."""
        self._cache.discard(key)
        identity = await anyio.to_thread.run_sync(self._save_sync, path, data, exclusive)
        if identity is not None:
            self._cache.put(key, identity, stored)

    def decode(self, data: bytes, path: str) -> T:
        try:
            return self._decoder.decode(data)
        except msgspec.DecodeError as exc:
            raise CorruptRecord(path, str(exc)) from exc

    def _load_sync(self, path: str) -> tuple[FileIdentity, T]:
        """(the file's identity, its record). The identity is taken first: if the file is
        replaced in between, the entry names the old file and is never matched."""
        try:
            identity = self.fs.identity(path)
            data = self.fs.read(path)
        except FileNotFoundError:
            name = os.path.basename(path).removesuffix(SUFFIX)
            raise NotFound(f"{self.kind} {name!r} not found") from None
        except OSError as exc:
            raise storage_error(exc, "read", path) from exc
        return identity, self.decode(data, path)

    def _save_sync(self, path: str, data: bytes, exclusive: bool) -> FileIdentity | None:
        if exclusive:
            try:
                self.fs.size(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise storage_error(exc, "stat", path) from exc
            else:
                raise AlreadyExists(f"{self.kind} {os.path.basename(path)!r} already exists")
        replace_atomically(self.fs, path, data)
        try:
            return self.fs.identity(path)
        except OSError:
            return None  # written; only not cached

    def _load_all_sync(self, decode: Callable[[bytes, str], R]) -> list[R]:
        try:
            names = sorted(n for n in self.fs.listdir(self.directory) if n.endswith(SUFFIX))
        except OSError as exc:
            raise storage_error(exc, "listdir", self.directory) from exc
        out: list[R] = []
        for name in names:
            path = os.path.join(self.directory, name)
            try:
                data = self.fs.read(path)
            except FileNotFoundError:
                continue  # removed between listdir and read
            except OSError as exc:
                raise storage_error(exc, "read", path) from exc
            out.append(decode(data, path))
        return out
