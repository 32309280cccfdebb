"""The production runtime: the Clock and IdGen (the only places that read the time or make
ids) and the collector's setting while the app serves."""

from __future__ import annotations

import gc
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from backend.core.ports import Clock


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class ClockFileError(ValueError):
    """The simulated clock's file is missing or does not hold an ISO instant with a zone."""


def read_clock_file(path: Path) -> datetime:
    """The instant written in `path` (ISO 8601 with a time zone); ClockFileError if not."""
    try:
        text = path.read_text("utf-8").strip()
    except OSError as exc:
        raise ClockFileError(f"cannot read the clock file {path}: {exc.strerror}") from exc
    try:
        instant = datetime.fromisoformat(text)
    except ValueError:
        instant = None
    if instant is None or instant.tzinfo is None:
        raise ClockFileError(
            f"the clock file {path} must hold one ISO instant with a zone, got {text[:40]!r}"
        )
    return instant


class FileClock:
    """Simulated time for the pedagogy bench (`LH_CLOCK_FILE`), read-only: now is the
    instant written in the file plus the real time since the file was last written, so a
    session's own events keep their order and the bench moves days by rewriting the file.
    Nothing here writes the file; only the process that owns it (the bench) does."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, datetime] | None = None
        read_clock_file(path)  # a bad file fails at start-up, not at the first turn

    def now(self) -> datetime:
        written = os.stat(self.path).st_mtime_ns
        if self._seen is None or self._seen[0] != written:
            self._seen = (written, read_clock_file(self.path))
        since = datetime.now(UTC) - datetime.fromtimestamp(written / 1e9, UTC)
        return self._seen[1] + max(since, timedelta(0))


def clock_from(clock_file: Path | None) -> Clock:
    """The clock the settings ask for: the system clock, or the bench's simulated one."""
    return FileClock(clock_file) if clock_file is not None else SystemClock()


class RandomIds:
    """`<prefix>-<12 hex>`: valid ids (lower-case, ≤64) that are unique in practice."""

    def new(self, prefix: str) -> str:
        return f"{prefix}-{secrets.token_hex(6)}"


@contextmanager
def startup_heap_frozen() -> Iterator[None]:
    """While the app serves, what exists once it has started (imports, routes, services,
    the chats read at start-up) sits in the collector's permanent generation: a full
    collection scans only what serving made since (≈ 60 ms over ≈ 100k objects every few
    bursts of turns before). Refcounting still frees frozen objects; unfrozen at shutdown
    so a process that builds apps again (tests) keeps no cycle out of reach."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
