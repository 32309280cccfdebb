"""A small learner's graph written through the real file store: a proposition learned a
month before `NOW` (fading by then), one answered wrong though the learner was sure, an open
misconception (its showing answer also a probe of the node it was asked on, so that node is
shaky), a right guess, and a `requires` edge. Used over HTTP and by the CLI."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio

from backend.core.ports import LedgerBatch
from backend.server.stores import build_stores
from shared_contracts.graph import EdgeLine, EventLine, NodeKind, PropositionLine

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
NOW = T0 + timedelta(days=30)
SURE, FAIRLY, GUESSING = 0.9, 0.6, 0.25


def _node(node_id: str, statement: str, at: datetime, kind: NodeKind = "proposition"):
    return PropositionLine(id=node_id, statement=statement, kind=kind, chat_id="c1", created_at=at)


def _answer(
    n: int, node_id: str, correct: bool, at: datetime, confidence: float | None, ref: str = ""
) -> EventLine:
    return EventLine(
        id=f"ev{n}" + ("b" if ref else ""),
        ref=ref or f"c1:call_{n}",
        chat_id="c1",
        node_id=node_id,
        kind="quiz_correct" if correct else "quiz_incorrect",
        at=at,
        tool_call_id=f"call_{n}",
        question=f"question {n}",
        answer="3/4" if not correct else "right",
        expected="5/6",
        correct=correct,
        confidence=confidence,
        turn=1,
    )


def batch() -> LedgerBatch:
    return LedgerBatch(
        propositions=[
            _node("p-add", "Adding fractions needs a common denominator", T0),
            _node("p-den", "The denominator counts the equal parts", T0),
            _node("p-guess", "A fraction is a division", T0),
            _node("p-sum", "Add the numerators over the common denominator", T0),
            _node("m-sum", "thinks you add the denominators too", T0 + 3 * HOUR, "misconception"),
        ],
        edges=[
            EdgeLine(
                id="e1", from_="p-add", to="p-den", type="requires", chat_id="c1", created_at=T0
            )
        ],
        events=[
            _answer(1, "p-add", True, T0 + HOUR, SURE),
            _answer(2, "p-add", True, T0 + HOUR + timedelta(minutes=5), FAIRLY),
            _answer(3, "p-den", False, T0 + 2 * HOUR, SURE),
            _answer(4, "p-guess", True, T0 + 2 * HOUR, GUESSING),
            _answer(5, "p-sum", False, T0 + 3 * HOUR, None),
            # the same answer showed the misconception: a probe of it too, one answer still
            _answer(5, "m-sum", False, T0 + 3 * HOUR, None, ref="c1:call_5>m-sum"),
        ],
    )


def write_graph(data_dir: Path) -> None:
    async def append() -> None:
        await build_stores(data_dir).graph.append(batch())

    anyio.run(append)
