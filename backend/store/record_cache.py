"""Decoded records kept by id, each valid only while its file (or row) is the one it was
read or written as, so a read of an unchanged record costs a `stat`, not a decode.

A chat record is decoded whole, so a turn that reads its chat ten times paid ten decodes
of a record that grows with the chat. The cache holds an entry weakly while anyone uses
the record, strongly while the record is pinned (a running turn, or a learner's open
session), and strongly for the most recently used others up to `keep_bytes` of their
files in total. A chat a learner has open is never decoded twice (with 50 learners and
the 8 most recent kept, every turn of a long chat decoded it again, and that churn, not
the data, was what made memory grow), and a chat nobody has open costs at most its share
of the budget, however long or many chats a server has seen.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, NamedTuple, Protocol, TypeVar

T = TypeVar("T")

CHAT_CACHE_BYTES = 8 << 20
"""Recently used chats that no session holds, kept decoded up to this many file bytes
(decoded, about 2.3 times that). An open session holds its own chat (`held`)."""


class Identity(Protocol):
    """What a cached record is checked against: equal only for the very same version of
    it. `size` (its encoded bytes) counts against the cache's budget."""

    @property
    def size(self) -> int: ...


class FileIdentity(NamedTuple):
    """What changes whenever a file is replaced or rewritten."""

    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int


class _Entry(NamedTuple, Generic[T]):
    identity: Identity
    ref: weakref.ref[T] | None  # None: the type takes no weak references; `keep` holds it


class _Pin(Generic[T]):
    """How many hold a record pinned, and its latest version (None: not in memory)."""

    __slots__ = ("holders", "record")

    def __init__(self, record: T | None) -> None:
        self.holders = 0
        self.record = record


class RecordCache(Generic[T]):
    """`get(id, identity)` → the record cached for exactly that file, else None."""

    def __init__(self, keep_bytes: int) -> None:
        self.keep_bytes = keep_bytes
        self._entries: dict[str, _Entry[T]] = {}
        self._recent: OrderedDict[str, tuple[int, T]] = OrderedDict()  # id -> (size, record)
        self._recent_bytes = 0
        self._pins: dict[str, _Pin[T]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def held_bytes(self) -> int:
        """File bytes of the records held strongly for recency (pins aside)."""
        return self._recent_bytes

    def get(self, record_id: str, identity: Identity) -> T | None:
        entry = self._entries.get(record_id)
        if entry is None or entry.identity != identity:
            return None
        record = self._alive(record_id)
        if record is None:
            return None
        self._hold(record_id, identity.size, record)
        return record

    def put(self, record_id: str, identity: Identity, record: T) -> None:
        try:
            ref: weakref.ref[T] | None = weakref.ref(record, self._dropper(record_id))
        except TypeError:  # a Struct without `weakref=True`
            ref = None
        self._entries[record_id] = _Entry(identity, ref)
        self._hold(record_id, identity.size, record)

    def entry(self, record_id: str) -> tuple[Identity, T] | None:
        """(the identity it was cached for, the record), if one is still in memory: what a
        store checks with the owner of the data before using it."""
        entry = self._entries.get(record_id)
        record = self._alive(record_id) if entry is not None else None
        return None if entry is None or record is None else (entry.identity, record)

    def discard(self, record_id: str) -> None:
        """Forget a record whose file may have changed in a way we cannot name (a failed
        write): the next read goes to the file."""
        self._entries.pop(record_id, None)
        self._let_go(record_id)

    def pin(self, record_id: str) -> None:
        """Until `unpin`, the record's latest version stays cached (a turn or a session)."""
        pin = self._pins.get(record_id)
        if pin is None:
            pin = self._pins[record_id] = _Pin(self._alive(record_id))
        elif pin.record is None:
            pin.record = self._alive(record_id)
        pin.holders += 1

    def unpin(self, record_id: str) -> None:
        pin = self._pins[record_id]
        pin.holders -= 1
        if pin.holders == 0:
            del self._pins[record_id]

    def latest(self, record_id: str) -> T | None:
        """The record as last read or written, if still in memory: a pinned record's
        latest version (kept through a write in flight), else any reachable cached one."""
        pin = self._pins.get(record_id)
        if pin is not None and pin.record is not None:
            return pin.record
        return self._alive(record_id)

    def _alive(self, record_id: str) -> T | None:
        """The cached record, if any is still reachable (whatever its file now is)."""
        entry = self._entries.get(record_id)
        if entry is None:
            return None
        if entry.ref is not None:
            return entry.ref()
        held = self._recent.get(record_id)
        return held[1] if held is not None else None

    def _hold(self, record_id: str, size: int, record: T) -> None:
        pin = self._pins.get(record_id)
        if pin is not None:
            pin.record = record
        self._let_go(record_id)
        self._recent[record_id] = (size, record)
        self._recent_bytes += size
        while self._recent_bytes > self.keep_bytes:
            old, (old_size, _) = self._recent.popitem(last=False)
            self._recent_bytes -= old_size
            entry = self._entries.get(old)
            if entry is not None and entry.ref is None:
                del self._entries[old]

    def _let_go(self, record_id: str) -> None:
        held = self._recent.pop(record_id, None)
        if held is not None:
            self._recent_bytes -= held[0]

    def _dropper(self, record_id: str) -> Callable[[weakref.ref[T]], None]:
        """Callback: once a record is unreachable, drop its entry (unless since replaced)."""
        owner = weakref.ref(self)

        def drop(ref: weakref.ref[T]) -> None:
            cache = owner()
            if cache is not None:
                entry = cache._entries.get(record_id)
                if entry is not None and entry.ref is ref:
                    del cache._entries[record_id]

        return drop


class CacheView(Generic[T]):
    """One learner's part of a `RecordCache` shared by every learner's store in a process
    (so the memory budget is one, however many learners): the same calls, each key
    prefixed with the namespace."""

    def __init__(self, cache: RecordCache[T], namespace: str) -> None:
        self.cache = cache
        self._ns = namespace

    def get(self, record_id: str, identity: Identity) -> T | None:
        return self.cache.get(self._ns + record_id, identity)

    def put(self, record_id: str, identity: Identity, record: T) -> None:
        self.cache.put(self._ns + record_id, identity, record)

    def entry(self, record_id: str) -> tuple[Identity, T] | None:
        return self.cache.entry(self._ns + record_id)

    def discard(self, record_id: str) -> None:
        self.cache.discard(self._ns + record_id)

    def pin(self, record_id: str) -> None:
        self.cache.pin(self._ns + record_id)

    def unpin(self, record_id: str) -> None:
        self.cache.unpin(self._ns + record_id)

    def latest(self, record_id: str) -> T | None:
        return self.cache.latest(self._ns + record_id)
