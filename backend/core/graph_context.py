"""The teacher's graph context: the derived graph rendered as a compact markdown block.

Up to `WHOLE_GRAPH_LIMIT` nodes the whole graph is shown; past it, diagnostic hotspots
(misconceptions, nodes whose latest probe failed, shaky nodes) and their 1-hop neighbours.
Lines are added in priority order until the token budget (chars/3, rounded up) is reached,
so the block never exceeds `max_tokens`. The app's own markup is ASCII: one non-ASCII
character makes CPython store a whole string at 2-4 bytes a character, and encoding it (the
trace does) attaches a UTF-8 copy for the string's lifetime; a session holds its block.
"""

from __future__ import annotations

import math
from datetime import datetime

from shared_contracts.graph import GraphNode, GraphSnapshot
from shared_contracts.http import GraphContext

WHOLE_GRAPH_LIMIT = 150
MAX_STATEMENT_CHARS = 160
MIN_STATEMENT_CHARS = 60
NODE_LINE_OVERHEAD = 40  # "- `id` [state n/m right] " and the newline
OMITTED_RESERVE = 60  # room kept for the "... n more not shown" line
_STATE_ORDER = {
    "misconception": 0,
    "shaky": 1,
    "fading": 1,
    "verified": 2,
    "resolved": 2,
    "introduced": 3,
    "unseen": 4,
}
_UNSEEN_NOTE = (
    " Unseen: a prerequisite a session rested on that the learner has not shown yet; check"
    " it before building on it."
)
_EPOCH = datetime.min


CHARS_PER_TOKEN = 3
"""Conservative on purpose: ids and markdown tokenize densely (measured ~3.3 chars per
tiktoken token on this block), so the real count stays under the budget."""


def estimate_tokens(text: str) -> int:
    """A deterministic, conservative token estimate: characters / 3, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _node_line(node: GraphNode, limit: int) -> str:
    probed = node.correct + node.incorrect
    score = f" {node.correct}/{probed} right" if probed else ""
    return f"- `{node.id}` [{node.state}{score}] {_short(node.statement, limit)}"


def _latest_failed(node: GraphNode) -> bool:
    return bool(node.probes) and node.probes[-1].correct is False


def _hotspots(snapshot: GraphSnapshot) -> list[GraphNode]:
    """Misconceptions, then recent failures (newest first), then shaky, then neighbours."""
    by_id = {n.id: n for n in snapshot.nodes}
    recent = lambda n: n.last_probe_at or _EPOCH  # noqa: E731
    misconceptions = [n for n in snapshot.nodes if n.kind == "misconception"]
    failed = sorted((n for n in snapshot.nodes if _latest_failed(n)), key=recent, reverse=True)
    shaky = sorted((n for n in snapshot.nodes if n.state == "shaky"), key=recent, reverse=True)
    core = list({n.id: n for n in [*misconceptions, *failed, *shaky]}.values())
    core_ids = {n.id for n in core}
    neighbours: dict[str, GraphNode] = {}
    for edge in snapshot.edges:
        for here, there in ((edge.from_, edge.to), (edge.to, edge.from_)):
            if here in core_ids and there not in core_ids and there in by_id:
                neighbours.setdefault(there, by_id[there])
    return [*core, *neighbours.values()]


def render_graph_context(snapshot: GraphSnapshot, *, max_tokens: int = 2000) -> GraphContext:
    """The markdown block for the teacher's instructions; empty for an empty graph."""
    total = len(snapshot.nodes)
    if total == 0:
        return GraphContext(markdown="", nodes_total=0, nodes_shown=0, tokens_estimate=0)
    whole = total <= WHOLE_GRAPH_LIMIT
    if whole:
        chosen = sorted(snapshot.nodes, key=lambda n: _STATE_ORDER.get(n.state, 9))
        scope = "the whole graph"
    else:
        chosen = _hotspots(snapshot)
        scope = "diagnostic hotspots and their neighbours"
    # No title of its own: the teacher's prompt puts this block under its own heading.
    header = (
        f"{total} nodes in the learner's knowledge graph; showing {scope}. States: verified "
        "(recent probes right), shaky (a recent probe wrong), introduced (never probed), "
        "misconception (a wrong belief the learner held). Revisit shaky nodes and "
        "misconceptions first."
    )
    unseen = _UNSEEN_NOTE if any(n.state == "unseen" for n in chosen) else ""  # when it applies
    lines = [header + unseen + "\n", "### Nodes\n"]
    budget = max_tokens * CHARS_PER_TOKEN  # characters, matching `estimate_tokens`
    used = sum(len(s) for s in lines)
    if used + OMITTED_RESERVE > budget:
        return GraphContext(markdown="", nodes_total=total, nodes_shown=0, tokens_estimate=0)
    # Shorter statements when many nodes compete for the budget, so more of them fit.
    room = (budget - used - OMITTED_RESERVE) // max(len(chosen), 1) - NODE_LINE_OVERHEAD
    limit = max(MIN_STATEMENT_CHARS, min(MAX_STATEMENT_CHARS, room))
    shown: set[str] = set()
    for node in chosen:
        line = _node_line(node, limit) + "\n"
        if used + len(line) + OMITTED_RESERVE > budget:
            break
        lines.append(line)
        used += len(line)
        shown.add(node.id)
    if len(shown) < total:
        note = f"- ... {total - len(shown)} more nodes not shown\n"
        lines.append(note)
        used += len(note)
    lines += _dependencies(snapshot, shown, budget - used)
    markdown = "".join(lines).rstrip("\n")
    return GraphContext(
        markdown=markdown,
        nodes_total=total,
        nodes_shown=len(shown),
        tokens_estimate=estimate_tokens(markdown),
    )


def _dependencies(snapshot: GraphSnapshot, shown: set[str], room: int) -> list[str]:
    """The edges between shown nodes, under their title, as many as fit in `room`
    characters (none, title included, when not even the first fits)."""
    edge_lines = [
        f"- `{e.from_}` {e.type} `{e.to}`\n"
        for e in snapshot.edges
        if e.from_ in shown and e.to in shown
    ]
    title = "### Dependencies (a requires b: learn b first)\n"
    if not edge_lines or len(title) + len(edge_lines[0]) > room:
        return []
    out = [title]
    used = len(title)
    for line in edge_lines:
        if used + len(line) > room:
            break
        out.append(line)
        used += len(line)
    return out
