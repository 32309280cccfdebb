"""A graph with the learner model's states, as `GET /api/graph?as_of=` answers: a fading
proposition with its memory, a resolved misconception with the answer that resolved it,
and the sessions they came from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared_contracts.graph import (
    GraphEdge,
    GraphNode,
    GraphSession,
    GraphSnapshot,
    Memory,
    Probe,
    Resolution,
)

AS_OF = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)

FIRST = GraphSession(chat_id="c1", folded_at=12, at=AS_OF - 30 * DAY, nodes=2)
REVIEWED = GraphSession(chat_id="c2", folded_at=6, at=AS_OF - 2 * DAY, nodes=1)
TITLES = {"c1": "Teach me fractions", "c2": "Review: 2 things due"}

FADING = GraphNode(
    id="half",
    statement=r"$\frac{1}{2}$ is bigger than $\frac{1}{3}$",
    kind="proposition",
    state="fading",
    correct=1,
    sessions=["c1"],
    probes=[
        Probe(
            at=AS_OF - 30 * DAY,
            chat_id="c1",
            question="Which is bigger?",
            answer="1/2",
            expected="1/2",
            correct=True,
        )
    ],
    memory=Memory(
        stability=3.2,
        difficulty=5.1,
        retrievability=0.714,
        due=AS_OF - 27 * DAY,
        last_review=AS_OF - 30 * DAY,
        reviews=1,
    ),
)
RESOLVED = GraphNode(
    id="thirds",
    statement="thinks 1/3 > 1/2 because 3 > 2",
    kind="misconception",
    state="resolved",
    sessions=["c1", "c2"],
    resolution=Resolution(
        at=AS_OF - 2 * DAY,
        chat_id="c2",
        question=r"Which is bigger: $\frac{1}{3}$ or $\frac{1}{2}$?",
        answer="1/2",
    ),
)
VERIFIED = GraphNode(
    id="denominator",
    statement="The denominator counts the equal parts",
    kind="proposition",
    state="verified",
    sessions=["c1"],
    memory=Memory(
        stability=40.0,
        difficulty=4.0,
        retrievability=0.97,
        due=AS_OF + 12 * DAY,
        last_review=AS_OF - 2 * DAY,
        reviews=3,
    ),
)
NOW = GraphSnapshot(
    nodes=[FADING, RESOLVED, VERIFIED],
    edges=[GraphEdge(from_="half", to="denominator", type="requires")],
    sessions=[FIRST, REVIEWED],
    as_of=AS_OF,
)
