"""GraphStore on files: `root/graph/<ledger>.jsonl`, append-only, one writer, byte cursors."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from backend.core.errors import CorruptRecord, StorageError
from backend.core.ports import LEDGER_TYPES, LEDGERS, LedgerBatch, LedgerCursor
from backend.store.errors import storage_error
from backend.store.fileops import FileOps, OsFileOps
from backend.store.jsonl import append_once, decode_lines, repair_tail, rollback, sound_size


class JsonlGraphStore:
    """The graph ledgers. Opening repairs torn tails; `append` writes each ledger with one
    `write` + fsync, `sessions` last, and on failure cuts every ledger back (best effort).

    `read_only` (the CLI's readers): nothing on disk changes, not even a torn tail; reads
    stop before it and `append` refuses."""

    def __init__(self, root: Path, fs: FileOps | None = None, *, read_only: bool = False) -> None:
        self._fs = fs or OsFileOps()
        self._dir = os.path.join(root, "graph")
        self._encoder = msgspec.json.Encoder()
        self._decoders = {name: msgspec.json.Decoder(t) for name, t in LEDGER_TYPES.items()}
        self._lock = anyio.Lock()
        self._read_only = read_only
        if not read_only:
            try:
                self._fs.makedirs(self._dir)
            except OSError as exc:
                raise storage_error(exc, "open", self._dir) from exc
        self._stale = False  # set when a failed append could not be rolled back cleanly
        self._sizes = self._sound_sizes() if read_only else self._repair_all()
        self._exists = {name: self._sizes[name] > 0 or self._present(name) for name in LEDGERS}

    def path(self, ledger: str) -> str:
        return os.path.join(self._dir, f"{ledger}.jsonl")

    async def read_since(self, cursor: LedgerCursor) -> tuple[LedgerBatch, LedgerCursor]:
        """Lines appended after `cursor` (decoded as whole buffers) and the cursor past them.
        Nothing appended since `cursor` (this store is the ledgers' one writer, so it knows
        their lengths) answers at once, with no file read and no thread hop."""
        if not self._stale and all(cursor.get(name) == self._sizes[name] for name in LEDGERS):
            return LedgerBatch(), cursor
        async with self._lock:
            return await anyio.to_thread.run_sync(self._read_sync, cursor)

    async def append(self, batch: LedgerBatch) -> None:
        """Append every ledger's lines (sessions last); `StorageError` if the disk refuses."""
        if batch.is_empty():
            return
        if self._read_only:
            raise StorageError(f"{self._dir} is open read-only")
        buffers = self._encode(batch)
        async with self._lock:
            await anyio.to_thread.run_sync(self._append_sync, buffers)

    def _sound_sizes(self) -> dict[str, int]:
        try:
            return {
                name: sound_size(self._fs, self.path(name), self._decoders[name])[1]
                for name in LEDGERS
            }
        except OSError as exc:
            raise storage_error(exc, "read", self._dir) from exc

    def _repair_all(self) -> dict[str, int]:
        return {
            name: repair_tail(self._fs, self.path(name), self._decoders[name]) for name in LEDGERS
        }

    def _refresh(self) -> None:
        """After a failed append, trust the disk again (a torn tail is cut, whole lines stay)."""
        if self._stale:
            self._sizes = self._repair_all()
            self._stale = False

    def _present(self, ledger: str) -> bool:
        try:
            self._fs.size(self.path(ledger))
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise storage_error(exc, "stat", self.path(ledger)) from exc
        return True

    def _encode(self, batch: LedgerBatch) -> list[tuple[str, bytes]]:
        out = []
        for name in LEDGERS:
            lines = getattr(batch, name)
            if not lines:
                continue
            buf = bytearray()
            for line in lines:
                self._encoder.encode_into(line, buf, -1)
                buf.extend(b"\n")
            data = bytes(buf)
            try:  # refuse lines that would not read back: they would poison the ledger
                self._decoders[name].decode_lines(data)
            except msgspec.DecodeError as exc:
                raise StorageError(f"refusing to append an unreadable {name} line: {exc}") from exc
            out.append((name, data))
        return out

    def _append_sync(self, buffers: list[tuple[str, bytes]]) -> None:
        self._refresh()
        done: list[tuple[str, int]] = []
        try:
            for name, data in buffers:
                before = self._sizes[name]
                append_once(self._fs, self.path(name), data, before if self._exists[name] else None)
                self._exists[name] = True
                self._sizes[name] = before + len(data)
                done.append((name, before))
        except StorageError:
            self._roll_back(done)
            self._stale = True
            raise

    def _roll_back(self, done: list[tuple[str, int]]) -> None:
        for name, before in reversed(done):
            rollback(self._fs, self.path(name), before)
            self._sizes[name] = before

    def _read_sync(self, cursor: LedgerCursor) -> tuple[LedgerBatch, LedgerCursor]:
        self._refresh()
        out = LedgerBatch()
        offsets = []
        for name in LEDGERS:
            start, end = cursor.get(name), self._sizes[name]
            path = self.path(name)
            if start > end:
                raise StorageError(f"cursor {start} is past the end ({end}) of {path}")
            if start < end:
                try:
                    data = self._fs.read(path, start, end - start)
                except OSError as exc:
                    raise storage_error(exc, "read", path) from exc
                getattr(out, name).extend(self._decode(name, path, data, start))
            offsets.append((name, end))
        return out, LedgerCursor(tuple(offsets))

    def _decode(self, name: str, path: str, data: bytes, start: int) -> list[Any]:
        try:
            return decode_lines(self._decoders[name], data, path, 1)
        except CorruptRecord as exc:
            if not start or exc.line is None:
                raise
            # Only on failure: count the lines before the cursor for an absolute line number.
            before = self._fs.read(path, 0, start).count(b"\n")
            raise CorruptRecord(path, str(exc.__cause__), exc.line + before) from exc.__cause__
