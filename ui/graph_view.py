"""The knowledge graph as React Flow nodes and edges, laid out in layers in Python.

Edge semantics: `{from: A, to: B, type: requires}` reads "A requires B", so B is a
prerequisite and sits in a layer left of A; arrows run from prerequisite to dependant and
are labelled "needed for", which reads true along the arrow.
`supports` edges are drawn dashed and do not change the layers.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime
from typing import Any

from shared_contracts.graph import GraphEdge, GraphNode, GraphSnapshot

COLUMN_WIDTH, ROW_HEIGHT, NODE_WIDTH = 300, 120, 240
STATES = ("verified", "introduced", "shaky", "misconception")
STATE_STYLE = {
    # state: (label, icon, fill, border, text)
    "verified": ("verified", "✓", "#d3f9d8", "#2f9e44", "#0b3d17"),
    "introduced": ("introduced", "○", "#e7ecf2", "#64748b", "#1e293b"),
    "shaky": ("shaky", "!", "#fff3bf", "#f08c00", "#4a3000"),
    "misconception": ("misconception", "✗", "#ffe3e3", "#e03131", "#5c0a0a"),
}


@dataclasses.dataclass
class StateCount:
    state: str = ""
    label: str = ""
    icon: str = ""
    colour: str = ""
    count: int = 0


@dataclasses.dataclass
class ProbeRow:
    question: str = ""
    answer: str = ""
    verdict: str = ""
    when: str = ""
    session: str = ""


@dataclasses.dataclass
class NodeDetail:
    id: str = ""
    statement: str = ""
    kind: str = ""
    state: str = ""
    state_label: str = ""
    icon: str = ""
    colour: str = ""
    sessions: list[str] = dataclasses.field(default_factory=list)
    quotes: list[str] = dataclasses.field(default_factory=list)
    probes: list[ProbeRow] = dataclasses.field(default_factory=list)


def layers(nodes: list[GraphNode], edges: list[GraphEdge]) -> dict[str, int]:
    """Each node's layer: 0 without prerequisites, else 1 + its deepest prerequisite's."""
    ids = {n.id for n in nodes}
    prereqs: dict[str, list[str]] = {n.id: [] for n in nodes}
    for edge in edges:
        if edge.type == "requires" and edge.from_ in ids and edge.to in ids:
            prereqs[edge.from_].append(edge.to)
    depth: dict[str, int] = {}
    visiting: set[str] = set()

    def visit(node_id: str) -> int:
        if node_id in depth:
            return depth[node_id]
        if node_id in visiting:  # a cycle: break it here
            return 0
        visiting.add(node_id)
        value = max((visit(p) + 1 for p in prereqs[node_id]), default=0)
        visiting.discard(node_id)
        depth[node_id] = value
        return value

    for node in nodes:
        visit(node.id)
    return depth


def filtered(snapshot: GraphSnapshot, state: str, session: str) -> list[GraphNode]:
    """Nodes matching a state ("" = all) and a session ("" = all)."""
    return [
        n
        for n in snapshot.nodes
        if (not state or n.state == state) and (not session or session in n.sessions)
    ]


REQUIRES_LABEL = "needed for"


_FRACTION = re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}")
_SYMBOLS = {r"\times": "×", r"\cdot": "·", r"\div": "÷", r"\le": "≤", r"\ge": "≥", r"\ne": "≠"}


def plain_math(text: str) -> str:
    """Inline math as plain text for labels React Flow cannot typeset: $\\frac{1}{2}$ → 1/2."""
    text = _FRACTION.sub(r"\1/\2", text)
    for command, symbol in _SYMBOLS.items():
        text = re.sub(re.escape(command) + r"(?![A-Za-z])", symbol, text)
    return text.replace("$$", "").replace("$", "")


def node_label(node: GraphNode, new: bool = False) -> str:
    label, icon, *_ = STATE_STYLE[node.state]
    return f"{icon} {plain_math(node.statement)}\n— {label}{' · new' if new else ''}"


def flow_nodes(
    nodes: list[GraphNode], edges: list[GraphEdge], highlight: str = ""
) -> list[dict[str, Any]]:
    """React Flow nodes laid out in layers; nodes from session `highlight` stand out."""
    depth = layers(nodes, edges)
    columns: dict[int, list[GraphNode]] = {}
    for node in sorted(nodes, key=lambda n: (n.sessions[:1], n.statement.lower())):
        columns.setdefault(depth[node.id], []).append(node)
    out = []
    for column, members in sorted(columns.items()):
        for row, node in enumerate(members):
            _, _, fill, border, text = STATE_STYLE[node.state]
            new = bool(highlight) and highlight in node.sessions
            out.append(
                {
                    "id": node.id,
                    "position": {"x": column * COLUMN_WIDTH, "y": row * ROW_HEIGHT},
                    "data": {"label": node_label(node, new)},
                    "ariaLabel": f"{node.statement} ({node.state})",
                    "sourcePosition": "right",
                    "targetPosition": "left",
                    "style": {
                        "background": fill,
                        "border": f"2px {'dashed' if node.kind == 'misconception' else 'solid'} "
                        f"{border}",
                        "color": text,
                        "width": NODE_WIDTH,
                        "whiteSpace": "pre-line",
                        "fontSize": "14px",
                        "textAlign": "left",
                        "borderRadius": "8px",
                        "boxShadow": f"0 0 0 4px {border}55" if new else "none",
                    },
                }
            )
    return out


def flow_edges(nodes: list[GraphNode], edges: list[GraphEdge]) -> list[dict[str, Any]]:
    """Requires: solid arrow from prerequisite to dependant; supports: dashed, no arrow."""
    ids = {n.id for n in nodes}
    out = []
    for edge in edges:
        if edge.from_ not in ids or edge.to not in ids:
            continue
        requires = edge.type == "requires"
        item: dict[str, Any] = {
            "id": f"{edge.to}-{edge.type}-{edge.from_}",
            "source": edge.to,
            "target": edge.from_,
            "label": REQUIRES_LABEL if requires else edge.type,
            "style": {"stroke": "#64748b", "strokeWidth": 2}
            if requires
            else {"stroke": "#94a3b8", "strokeWidth": 1.5, "strokeDasharray": "6 4"},
        }
        if requires:
            item["markerEnd"] = {"type": "arrowclosed", "color": "#64748b"}
        out.append(item)
    return out


def counts(snapshot: GraphSnapshot) -> list[StateCount]:
    """Nodes per derived state, in legend order (all four, zeros included)."""
    tally = dict.fromkeys(STATES, 0)
    for node in snapshot.nodes:
        tally[node.state] = tally.get(node.state, 0) + 1
    return [
        StateCount(
            state=s,
            label=STATE_STYLE[s][0],
            icon=STATE_STYLE[s][1],
            colour=STATE_STYLE[s][3],
            count=tally[s],
        )
        for s in STATES
    ]


def sessions(snapshot: GraphSnapshot) -> list[str]:
    """Every chat id that contributed a node, first seen first."""
    seen: dict[str, None] = {}
    for session in snapshot.sessions:
        seen.setdefault(session.chat_id, None)
    for node in snapshot.nodes:
        for chat_id in node.sessions:
            seen.setdefault(chat_id, None)
    return list(seen)


def when(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M") if at else ""


def verdict_label(correct: bool | None) -> str:
    if correct is None:
        return "answered"
    return "✓ right" if correct else "✗ wrong"


def detail(snapshot: GraphSnapshot, node_id: str) -> NodeDetail | None:
    """The side panel for one node: statement, state, evidence and probe history."""
    node = next((n for n in snapshot.nodes if n.id == node_id), None)
    if node is None:
        return None
    label, icon, _, border, _ = STATE_STYLE[node.state]
    return NodeDetail(
        id=node.id,
        statement=node.statement,
        kind=node.kind,
        state=node.state,
        state_label=label,
        icon=icon,
        colour=border,
        sessions=list(node.sessions),
        quotes=[e.quote for e in node.evidence],
        probes=[
            ProbeRow(
                question=p.question,
                answer=p.answer,
                verdict=verdict_label(p.correct),
                when=when(p.at),
                session=p.chat_id,
            )
            for p in sorted(node.probes, key=lambda p: p.at, reverse=True)
        ],
    )
