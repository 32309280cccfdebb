"""Append-only logs in tables: lines encoded and checked before any database call, and
decoded as one buffer (msgspec's `decode_lines`), naming the log and line on failure."""

from __future__ import annotations

from typing import Any

import msgspec

from backend.core.errors import StorageError
from backend.store.jsonl import decode_lines
from backend.store.pg.database import JsonBytes


def encode_lines(
    encoder: msgspec.json.Encoder, decoder: msgspec.json.Decoder[Any], items: list[Any], what: str
) -> list[JsonBytes]:
    """Each item's JSON; `StorageError` if any would not read back (it would poison the log)."""
    lines = [JsonBytes(encoder.encode(item)) for item in items]
    try:
        decoder.decode_lines(b"\n".join(lines))
    except msgspec.DecodeError as exc:
        raise StorageError(f"refusing to append an unreadable {what} line: {exc}") from exc
    return lines


def decode_rows(
    decoder: msgspec.json.Decoder[Any], lines: list[bytes], where: str, first_pos: int
) -> list[Any]:
    """The decoded lines (positions `first_pos`, `first_pos + 1`, ...); a bad one raises
    `CorruptRecord` naming `where` and its position."""
    return decode_lines(decoder, b"\n".join(lines), where, first_pos) if lines else []
