"""The graph a session starts from: the teacher's block (`core.graph_context`; a review's
due items first) and the part of the graph its plan is checked against (`at_risk_graph`),
both as of the session's first turn, read through the graph's read channel."""

from __future__ import annotations

from backend.agent.extraction.channels import GraphReader
from backend.core.graph_context import render_graph_context
from backend.core.prerequisites import at_risk_graph
from backend.core.review_session import render_review_block
from backend.turn.seams import ContextRequest, SessionGraph


class SessionGraphs:
    """A `GraphContext` (see `seams`) over the learner's graph reader."""

    def __init__(self, graph: GraphReader) -> None:
        self._graph = graph

    async def __call__(self, request: ContextRequest) -> SessionGraph:
        snapshot = await self._graph.snapshot_for(request.as_of)
        markdown = render_graph_context(snapshot).markdown
        if request.mode == "review":
            block = render_review_block(await self._graph.review_brief(request.as_of))
            markdown = f"{block}\n\n{markdown}" if markdown else block
        return SessionGraph(markdown, at_risk_graph(snapshot))
