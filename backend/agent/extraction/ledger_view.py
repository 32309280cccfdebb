"""A follower of the graph ledgers: reads only the lines appended since last time and folds
them in place into the state it owns. It never writes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from backend.core.graph import FoldDelta, GraphState, fold_into
from backend.core.ports import GraphStore, LedgerCursor

OnFold = Callable[[GraphState, FoldDelta], None]


class LedgerView:
    """`refresh()` returns the state of everything appended so far (incremental: O(new
    lines)). The state is the view's own and grows in place on later refreshes: read it,
    never mutate it, and `fold` (which copies) to build on it. `on_fold(state, delta)` is
    called, under the view's lock, with what each refresh changed."""

    def __init__(self, graph: GraphStore, on_fold: OnFold | None = None) -> None:
        self._graph = graph
        self._cursor = LedgerCursor()
        self._state = GraphState()
        self._on_fold = on_fold
        self._lock = anyio.Lock()
        self.version = 0
        """Bumped whenever new lines were folded (readers cache derived results on it)."""
        self.before_lock: Callable[[], Awaitable[None]] | None = None
        """Awaited before a refresh takes the lock. A replay holds the refresh there until
        its read's recorded turn: held inside the lock, it would block the unit whose read
        was recorded first (and which waits for the lock)."""

    async def refresh(self) -> GraphState:
        if self.before_lock is not None:
            await self.before_lock()
        async with self._lock:
            batch, cursor = await self._graph.read_since(self._cursor)
            self._cursor = cursor
            if not batch.is_empty():
                delta = fold_into(self._state, batch)
                self.version += 1
                if self._on_fold is not None:
                    self._on_fold(self._state, delta)
            return self._state
