"""The teacher's graph context: whole graph while small, hotspots past 150, ≤ 2,000 tokens."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from backend.core.graph_context import estimate_tokens, render_graph_context
from shared_contracts.graph import GraphEdge, GraphNode, GraphSnapshot, Probe

T0 = datetime(2026, 1, 1, tzinfo=UTC)
STATES = ["introduced", "verified", "shaky", "misconception"]


def probe(i: int, correct: bool) -> Probe:
    return Probe(
        at=T0 + timedelta(minutes=i),
        chat_id="c1",
        question="q",
        answer="a",
        expected="e",
        correct=correct,
    )


def synthetic(n: int) -> GraphSnapshot:
    """n nodes cycling through the states, long statements, a chain of requires edges."""
    nodes = []
    for i in range(n):
        state = STATES[i % 4]
        kind = "misconception" if state == "misconception" else "proposition"
        probes = [probe(i, state != "shaky")] if state in ("verified", "shaky") else []
        nodes.append(
            GraphNode(
                id=f"node-{i:05d}",
                statement=f"Proposition number {i} about adding fractions with unlike denominators "
                * 3,
                kind=kind,
                state=state,
                correct=int(state == "verified"),
                incorrect=int(state == "shaky"),
                last_probe_at=probes[-1].at if probes else None,
                probes=probes,
            )
        )
    edges = [
        GraphEdge(from_=f"node-{i:05d}", to=f"node-{i + 1:05d}", type="requires", chats=["c1"])
        for i in range(n - 1)
    ]
    return GraphSnapshot(nodes=nodes, edges=edges)


def test_empty_graph_gives_an_empty_block() -> None:
    ctx = render_graph_context(GraphSnapshot())
    assert (ctx.markdown, ctx.nodes_total, ctx.nodes_shown, ctx.tokens_estimate) == ("", 0, 0, 0)


@pytest.mark.parametrize("n", [10, 150, 1_000, 10_000])
def test_context_never_exceeds_the_token_budget(n: int) -> None:
    ctx = render_graph_context(synthetic(n))
    assert ctx.tokens_estimate == estimate_tokens(ctx.markdown) <= 2000
    assert ctx.nodes_total == n
    assert 0 < ctx.nodes_shown <= n
    assert len(re.findall(r"^- `node-\d+` \[", ctx.markdown, flags=re.M)) == ctx.nodes_shown


def test_small_graph_is_shown_whole_with_its_edges() -> None:
    ctx = render_graph_context(synthetic(10))
    assert ctx.nodes_shown == 10
    assert "the whole graph" in ctx.markdown
    assert "- `node-00000` requires `node-00001`" in ctx.markdown
    # Misconceptions and shaky nodes come first.
    assert ctx.markdown.index("[misconception]") < ctx.markdown.index("[verified")


def test_large_graph_shows_hotspots_then_their_neighbours() -> None:
    base = synthetic(1_000)
    hot = {500: "misconception", 700: "shaky"}
    nodes = [
        msgspec.structs.replace(
            n,
            state=hot.get(i, "verified"),
            kind="misconception" if hot.get(i) == "misconception" else "proposition",
            probes=[probe(i, hot.get(i) != "shaky")],
            last_probe_at=probe(i, True).at,
        )
        for i, n in enumerate(base.nodes)
    ]
    ctx = render_graph_context(msgspec.structs.replace(base, nodes=nodes))
    assert "diagnostic hotspots" in ctx.markdown
    shown = re.findall(r"^- `(node-\d+)` \[", ctx.markdown, flags=re.M)
    assert shown[:2] == ["node-00500", "node-00700"]
    assert sorted(shown) == [f"node-{i:05d}" for i in (499, 500, 501, 699, 700, 701)]
    assert ctx.nodes_shown == 6
    assert "- `node-00499` requires `node-00500`" in ctx.markdown


def test_a_tight_budget_trims_but_stays_valid() -> None:
    ctx = render_graph_context(synthetic(40), max_tokens=200)
    assert ctx.tokens_estimate <= 200
    assert 0 < ctx.nodes_shown < 40


def test_the_block_for_an_ascii_graph_is_ascii() -> None:
    # Its own markup adds no non-ASCII character: the block is stored 1 byte a character
    # and encoding it (the trace does) attaches no UTF-8 copy to the session's string.
    for n in (10, 1_000):
        ctx = render_graph_context(synthetic(n))
        assert ctx.markdown.isascii()
    assert "right]" in render_graph_context(synthetic(10)).markdown  # scores are shown
    tight = render_graph_context(synthetic(1_000), max_tokens=300)
    assert "more nodes not shown" in tight.markdown and tight.markdown.isascii()


def test_unseen_prerequisites_come_last_and_are_explained_only_when_present() -> None:
    plain = render_graph_context(synthetic(4)).markdown
    assert "unseen" not in plain.lower()
    graph = synthetic(4)
    rests = GraphNode(
        id="node-rests", statement="Adding whole numbers", kind="proposition", state="unseen"
    )
    ctx = render_graph_context(msgspec.structs.replace(graph, nodes=[rests, *graph.nodes]))
    header, _, body = ctx.markdown.partition("### Nodes\n")
    assert "Unseen: a prerequisite" in header and "check it before building on it" in header
    nodes = body.partition("### Dependencies")[0].splitlines()
    assert nodes[-1] == "- `node-rests` [unseen] Adding whole numbers"
