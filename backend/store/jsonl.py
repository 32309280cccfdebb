"""Append-only JSONL files: one-write appends with rollback, torn-tail repair, typed decoding."""

from __future__ import annotations

import logging
import os
from typing import Any

import msgspec

from backend.core.errors import CorruptRecord
from backend.store.errors import storage_error
from backend.store.fileops import APPEND_FLAGS, FileOps

log = logging.getLogger("harness.store")

_WINDOW = 64 * 1024


def decode_lines(
    decoder: msgspec.json.Decoder[Any], data: bytes, path: str, first_line: int
) -> list[Any]:
    """Decode complete lines with one whole-buffer call; a bad line raises `CorruptRecord`
    naming `path` and its 1-based line number (`first_line` is the number of `data`'s first)."""
    try:
        return decoder.decode_lines(data)
    except msgspec.DecodeError:
        pass
    for index, line in enumerate(data.split(b"\n")):
        if not line.strip():
            continue
        try:
            decoder.decode(line)
        except msgspec.DecodeError as exc:
            raise CorruptRecord(path, str(exc), first_line + index) from exc
    raise CorruptRecord(path, "undecodable buffer", first_line)  # pragma: no cover


def complete_prefix(data: bytes) -> int:
    """Length of the part of `data` that ends in a newline (what a reader may decode)."""
    return data.rfind(b"\n") + 1


def sound_size(fs: FileOps, path: str, decoder: msgspec.json.Decoder[Any]) -> tuple[int, int]:
    """(size, sound) of a log: `sound` excludes an unterminated tail and an undecodable last
    line. Reads only the end of the file. A missing file is (0, 0)."""
    try:
        size = fs.size(path)
    except FileNotFoundError:
        return 0, 0
    window = _WINDOW
    while True:
        start = max(0, size - window)
        chunk = fs.read(path, start, size - start)
        end = chunk.rfind(b"\n")  # the newline ending the last complete line
        begin = chunk.rfind(b"\n", 0, end) if end >= 0 else -1
        if start == 0 or begin >= 0:
            break
        window *= 4  # a line longer than the window: look further back
    if end < 0:
        return size, 0
    try:
        decoder.decode(chunk[begin + 1 : end])
    except msgspec.DecodeError:
        return size, start + begin + 1
    return size, start + end + 1


def repair_tail(fs: FileOps, path: str, decoder: msgspec.json.Decoder[Any]) -> int:
    """Truncate a torn final line away (with a warning naming file and bytes); the new size."""
    try:
        size, sound = sound_size(fs, path, decoder)
        if sound < size:
            fs.truncate(path, sound)
            log.warning("[store] %s: truncated a torn tail of %d bytes", path, size - sound)
    except OSError as exc:
        raise storage_error(exc, "repair", path) from exc
    return sound


def append_once(
    fs: FileOps, path: str, data: bytes, size_before: int | None, *, durable: bool = True
) -> None:
    """One `write` on an `O_APPEND` fd, then (when `durable`) fsync, and fsync the directory
    for a new file. On any failure the file is cut back to `size_before` (best effort) and
    `DiskError` raised. `size_before` None means the file did not exist."""
    op = "open"
    try:
        fd = fs.open(path, APPEND_FLAGS)
        try:
            op = "write"
            written = fs.write(fd, data)
            if written != len(data):
                raise OSError(28, f"short write: {written} of {len(data)} bytes")
            if durable:
                op = "fsync"
                fs.fsync(fd)
        finally:
            fs.close(fd)
        if durable and size_before is None:
            op = "fsync_dir"
            fs.fsync_dir(os.path.dirname(path))
    except OSError as exc:
        rollback(fs, path, size_before or 0)
        raise storage_error(exc, op, path) from exc


def rollback(fs: FileOps, path: str, size: int) -> None:
    """Cut a log back to `size` after a failed append; a leftover tail is repaired at open."""
    try:
        if fs.size(path) > size:
            fs.truncate(path, size)
    except OSError:
        log.warning("[store] %s: could not roll back a failed append", path)
