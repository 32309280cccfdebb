"""TraceStore on files: `root/traces/<chat_id>.jsonl`, one write per append.

Traces are diagnostics, appended at every turn boundary: they are written without fsync.
A killed process loses nothing (the page cache keeps the write); an OS crash may cost the
last events, whose torn tail the next append repairs. Records and ledgers stay durable.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import anyio
import anyio.to_thread
import msgspec

from backend.core.errors import CorruptRecord, StorageError
from backend.store.errors import storage_error
from backend.store.fileops import FileOps, OsFileOps
from backend.store.jsonl import append_once, complete_prefix, decode_lines, repair_tail
from backend.store.keyed_locks import KeyedLocks
from backend.store.paths import id_path
from shared_contracts.trace import AnyTraceEvent

log = logging.getLogger("harness.store")


class JsonlTraceStore:
    """An append-only event log per chat. The first append to a log repairs its torn tail;
    `read` never writes and skips an unterminated or undecodable last line."""

    def __init__(self, root: Path, fs: FileOps | None = None) -> None:
        self._fs = fs or OsFileOps()
        self._dir = os.path.join(root, "traces")
        self._encoder = msgspec.json.Encoder()
        self._decoder = msgspec.json.Decoder(AnyTraceEvent)
        self._locks = KeyedLocks()
        self._sizes: dict[str, int | None] = {}  # known size once repaired; None: no file
        try:
            self._fs.makedirs(self._dir)
        except OSError as exc:
            raise storage_error(exc, "open", self._dir) from exc

    def path(self, chat_id: object) -> str:
        return id_path(self._dir, chat_id, ".jsonl", "chat id")

    async def append(self, chat_id: str, events: list[AnyTraceEvent]) -> None:
        path = self.path(chat_id)
        if not events:
            return
        data = self._encode(events)
        async with self._locks.hold(chat_id):
            await anyio.to_thread.run_sync(self._append_sync, chat_id, path, data)

    async def read(self, chat_id: str) -> list[AnyTraceEvent]:
        """Every complete event of a chat (none if it has no log)."""
        path = self.path(chat_id)
        return await anyio.to_thread.run_sync(self._read_sync, path)

    def _encode(self, events: list[AnyTraceEvent]) -> bytes:
        buf = bytearray()
        for event in events:
            self._encoder.encode_into(event, buf, -1)
            buf.extend(b"\n")
        data = bytes(buf)
        try:
            self._decoder.decode_lines(data)
        except msgspec.DecodeError as exc:
            raise StorageError(f"refusing to append an unreadable trace event: {exc}") from exc
        return data

    def _append_sync(self, chat_id: str, path: str, data: bytes) -> None:
        if chat_id not in self._sizes:
            size = repair_tail(self._fs, path, self._decoder)
            self._sizes[chat_id] = size if size or self._present(path) else None
        before = self._sizes[chat_id]
        try:
            append_once(self._fs, path, data, before, durable=False)
        except StorageError:
            self._sizes.pop(chat_id, None)  # re-check the file at the next append
            raise
        self._sizes[chat_id] = (before or 0) + len(data)

    def _present(self, path: str) -> bool:
        try:
            self._fs.size(path)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise storage_error(exc, "stat", path) from exc
        return True

    def _read_sync(self, path: str) -> list[AnyTraceEvent]:
        try:
            data = self._fs.read(path)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise storage_error(exc, "read", path) from exc
        end = complete_prefix(data)
        if end < len(data):
            log.warning("[store] %s: ignoring a torn tail of %d bytes", path, len(data) - end)
        body = data[:end]
        try:
            return decode_lines(self._decoder, body, path, 1)
        except CorruptRecord:
            # A bad last line is a torn tail; a bad line before it raises again below.
            last = body.rfind(b"\n", 0, max(end - 1, 0)) + 1
            events = decode_lines(self._decoder, body[:last], path, 1)
            log.warning("[store] %s: ignoring an undecodable last line", path)
            return events
