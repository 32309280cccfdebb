"""A follower of the graph ledgers: reads only the lines appended since last time and folds
them into the cached `GraphState`. It never writes."""

from __future__ import annotations

import anyio

from backend.core.graph import GraphState, fold
from backend.core.ports import GraphStore, LedgerCursor


class LedgerView:
    """`refresh()` returns the state of everything appended so far (incremental)."""

    def __init__(self, graph: GraphStore) -> None:
        self._graph = graph
        self._cursor = LedgerCursor()
        self._state = GraphState()
        self._lock = anyio.Lock()
        self.version = 0
        """Bumped whenever new lines were folded (readers cache derived results on it)."""

    async def refresh(self) -> GraphState:
        async with self._lock:
            batch, cursor = await self._graph.read_since(self._cursor)
            self._cursor = cursor
            if not batch.is_empty():
                self._state = fold(self._state, batch)
                self.version += 1
            return self._state
