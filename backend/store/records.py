"""A directory of JSON records, one file per id, each replaced atomically under a per-id lock."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Generic, TypeVar

import anyio
import anyio.to_thread
import msgspec

from backend.core.errors import CorruptRecord, NotFound, StorageError
from backend.store.atomic import remove_stray_tmp, replace_atomically
from backend.store.errors import AlreadyExists, storage_error
from backend.store.fileops import FileOps
from backend.store.keyed_locks import KeyedLocks
from backend.store.paths import id_path

T = TypeVar("T", bound=msgspec.Struct)

SUFFIX = ".json"


class RecordDir(Generic[T]):
    """Typed records in `directory/<id>.json`; the directory's stray tmp files go at open."""

    def __init__(self, directory: str, kind: str, type_: type[T], fs: FileOps) -> None:
        self.directory = directory
        self.kind = kind
        self.fs = fs
        self._encoder = msgspec.json.Encoder()
        self._decoder = msgspec.json.Decoder(type_)
        self._locks = KeyedLocks()
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

    async def load(self, record_id: object) -> T:
        """One record; `NotFound` if absent, `CorruptRecord` (naming the file) if undecodable."""
        path = self.path(record_id)
        return await anyio.to_thread.run_sync(self._load_sync, path)

    async def save(self, record_id: object, record: T, *, exclusive: bool = False) -> None:
        """Replace (or, with `exclusive`, create: `AlreadyExists` if taken) one record."""
        path = self.path(record_id)
        data = self.encode(record)
        async with self.lock(str(record_id)):
            await anyio.to_thread.run_sync(self._save_sync, path, data, exclusive)

    async def update(
        self, record_id: object, mutate: Callable[[T], T], get_id: Callable[[T], str]
    ) -> T:
        """Read-modify-write under the record's lock; `mutate` may not change the id."""
        path = self.path(record_id)
        async with self.lock(str(record_id)):
            current = await anyio.to_thread.run_sync(self._load_sync, path)
            new = mutate(current)
            if get_id(new) != str(record_id):
                raise StorageError(f"{self.kind} {record_id}: an update may not change the id")
            data = self.encode(new)
            await anyio.to_thread.run_sync(self._save_sync, path, data, False)
            return new

    async def load_all(self, decode: Callable[[bytes, str], object] | None = None) -> list:
        """Every record, decoded with `decode(data, path)` or the record decoder."""
        return await anyio.to_thread.run_sync(self._load_all_sync, decode)

    def encode(self, record: T) -> bytes:
        """Encode, and refuse to write what would not read back (a record that poisons disk)."""
        data = self._encoder.encode(record)
        try:
            self._decoder.decode(data)
        except msgspec.DecodeError as exc:
            raise StorageError(f"refusing to write an unreadable {self.kind}: {exc}") from exc
        return data

    def decode(self, data: bytes, path: str) -> T:
        try:
            return self._decoder.decode(data)
        except msgspec.DecodeError as exc:
            raise CorruptRecord(path, str(exc)) from exc

    def _load_sync(self, path: str) -> T:
        try:
            data = self.fs.read(path)
        except FileNotFoundError:
            name = os.path.basename(path).removesuffix(SUFFIX)
            raise NotFound(f"{self.kind} {name!r} not found") from None
        except OSError as exc:
            raise storage_error(exc, "read", path) from exc
        return self.decode(data, path)

    def _save_sync(self, path: str, data: bytes, exclusive: bool) -> None:
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

    def _load_all_sync(self, decode: Callable[[bytes, str], object] | None) -> list:
        try:
            names = sorted(n for n in self.fs.listdir(self.directory) if n.endswith(SUFFIX))
        except OSError as exc:
            raise storage_error(exc, "listdir", self.directory) from exc
        out = []
        for name in names:
            path = os.path.join(self.directory, name)
            try:
                data = self.fs.read(path)
            except FileNotFoundError:
                continue  # removed between listdir and read
            except OSError as exc:
                raise storage_error(exc, "read", path) from exc
            out.append(decode(data, path) if decode else self.decode(data, path))
        return out
