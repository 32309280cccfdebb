"""The knowledge graph as React Flow nodes and edges, laid out in layers in Python.

Edge semantics: `{from: A, to: B, type: requires}` reads "A requires B", so B is a
prerequisite and sits in a layer left of A; arrows run from prerequisite to dependant and
are labelled "needed for", which reads true along the arrow.
`supports` edges are drawn dashed and do not change the layers.

Nodes are grouped by the session that first taught them: one block per session, under the
session's title, packed in rows so the whole fits the canvas (oldest left, newest row on
top, so what a node rests on sits left of or below it); inside a block, one column per layer
(a layer taller than COLUMN_MAX_HEIGHT wraps into another column, what the next layer needs
in the column nearest it), each node as tall as its wrapped label. A prerequisite first
taught in a later session than its dependant is the one case drawn right of or above it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shared_contracts.graph import GraphEdge, GraphNode
from ui.model.graph_view import OUTLINED, STATE_STYLE, clip
from ui.model.mathdelims import plain_math

COLUMN_WIDTH, NODE_WIDTH = 300, 240
COLUMN_MAX_HEIGHT = 640
NODE_GAP, SESSION_GAP, TITLE_HEIGHT = 16, 80, 40
VIEW = (760, 560)
"""The graph canvas at 1280x800, in px: session blocks are packed into rows to fit it."""
READABLE_ZOOM = 0.8
"""The least zoom of a first view: 14 px labels stay 11 px on screen. A phone's canvas is
about half as wide as VIEW, which Python cannot see, so every first fit has this floor and
a drawing too big for it opens centred on its target, partly shown, instead of shrunk."""
FOCUS_BELOW = READABLE_ZOOM
"""A drawing that fits the canvas only below this zoom (labels unreadable) opens on its
newest session block instead; the fit-view button still shows all of it."""
LINE_HEIGHT, NODE_CHROME = 20, 24
"""px per label line (14px text), and the node's padding plus border top and bottom."""
LINE_CHARS = 26
"""Characters that fit a line of a NODE_WIDTH node (a little under, so estimates run tall)."""
LABEL_CHARS = 140
"""A longer statement is cut in its node's label; the side panel shows it whole."""
DRAW_LIMIT = 200
"""The most nodes drawn at once: past this a months-long graph is a hairball that takes
seconds to lay out, send and draw; the newest session blocks that fit are drawn instead."""
BLOCK_LIMIT = 24
"""The most session blocks drawn at once: a search matching a node or two in each of
hundreds of sessions would otherwise zoom out until no label can be read."""


def layers(nodes: list[GraphNode], edges: list[GraphEdge]) -> dict[str, int]:
    """Each node's layer: 1 + its deepest prerequisite's. A node without prerequisites sits
    just left of the nearest layer that needs it (0 when nothing does), so its arrows stay
    short instead of running behind the columns in between."""
    ids = {n.id for n in nodes}
    prereqs: dict[str, list[str]] = {n.id: [] for n in nodes}
    dependants: dict[str, list[str]] = {n.id: [] for n in nodes}
    for edge in edges:
        if edge.type == "requires" and edge.from_ in ids and edge.to in ids:
            prereqs[edge.from_].append(edge.to)
            dependants[edge.to].append(edge.from_)
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
    for node_id, needed_by in dependants.items():
        if needed_by and not prereqs[node_id]:
            depth[node_id] = max(0, min(depth[d] for d in needed_by) - 1)
    return depth


REQUIRES_LABEL = "needed for"
EDGE_NAME_CHARS = 60
"""How much of each end's statement an edge's spoken name quotes."""


def node_label(node: GraphNode, new: bool = False) -> str:
    label, icon, *_ = STATE_STYLE[node.state]
    statement = clip(plain_math(node.statement), LABEL_CHARS)
    return f"{icon} {statement}\n— {label}{' · new' if new else ''}"


def label_lines(label: str) -> int:
    """How many lines `label` wraps to in a node (word wrap at LINE_CHARS)."""
    lines = 0
    for paragraph in label.split("\n"):
        lines, used = lines + 1, 0
        for word in paragraph.split():
            if used and used + 1 + len(word) > LINE_CHARS:
                lines, used = lines + 1, 0
            used += (1 if used else 0) + len(word)
            while used > LINE_CHARS:  # a long word breaks anywhere (overflowWrap)
                lines, used = lines + 1, used - LINE_CHARS
    return lines


def _flow_node(node: GraphNode, label: str, x: int, y: int, new: bool) -> dict[str, Any]:
    state_label, _, fill, border, text = STATE_STYLE[node.state]
    dashed = node.kind == "misconception" or node.state in OUTLINED
    return {
        "id": node.id,
        "position": {"x": x, "y": y},
        "data": {"label": label},
        # the label's "· new" too: the aria-label replaces the text a screen reader reads
        "ariaLabel": f"{plain_math(node.statement)} ({state_label}{', new' if new else ''})",
        "sourcePosition": "right",
        "targetPosition": "left",
        "style": {
            "background": fill,
            "border": f"2px {'dashed' if dashed else 'solid'} {border}",
            "color": text,
            "width": NODE_WIDTH,
            "whiteSpace": "pre-line",
            "overflowWrap": "anywhere",
            "fontSize": "14px",
            "lineHeight": f"{LINE_HEIGHT}px",
            "textAlign": "left",
            "borderRadius": "8px",
            # a third of the border colour, which may be a theme variable rather than hex
            "boxShadow": f"0 0 0 4px color-mix(in srgb, {border} 33%, transparent)"
            if new
            else "none",
        },
    }


def _session_title(chat_id: str, title: str, width: int) -> dict[str, Any]:
    """A block's heading: a label node nobody can select, drag, focus or click."""
    return {
        "id": f"session-title-{chat_id}",
        "position": {"x": 0, "y": 0},
        "data": {"label": clip(title, 60)},
        "className": "lh-session-title",
        "selectable": False,
        "draggable": False,
        "focusable": False,
        "connectable": False,
        "style": {
            "width": width,
            "background": "transparent",
            "border": "none",
            "boxShadow": "none",
            "padding": "4px 0",
            "fontSize": "15px",
            "fontWeight": 600,
            "textAlign": "left",
            "pointerEvents": "none",
        },
    }


def _shift(item: dict[str, Any], dx: int, dy: int) -> dict[str, Any]:
    x, y = item["position"]["x"], item["position"]["y"]
    return {**item, "position": {"x": x + dx, "y": y + dy}}


def _rows(widths: list[int], limit: int) -> list[list[int]]:
    """Block indices in rows, each filled left to right up to `limit` wide (or one block)."""
    rows: list[list[int]] = [[]]
    used = 0
    for index, width in enumerate(widths):
        if rows[-1] and used + width > limit:
            rows.append([])
            used = 0
        rows[-1].append(index)
        used += width
    return rows


def pack_rows(sizes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Offsets for blocks of `sizes` (width, height), in order, in rows read left to right
    with the newest row on top (so older blocks sit left of or below newer ones). The row
    width is the one at which the whole best fits a VIEW-shaped canvas."""
    widths = [w for w, _ in sizes]
    limits: set[int] = set()
    for start in range(len(widths)):  # every run of consecutive widths, summed as it grows
        total = 0
        for width in widths[start:]:
            total += width
            limits.add(total)
    # Try each row width in one pass with running totals: hundreds of sessions give tens
    # of thousands of candidates, and rebuilding rows for each took a second.
    best_zoom, best_limit = 0.0, 0
    for limit in sorted(limits):
        wide = tall = used = row_height = 0
        for width, height in sizes:
            if used and used + width > limit:
                wide, tall, used, row_height = max(wide, used), tall + row_height, 0, 0
            used, row_height = used + width, max(row_height, height)
        wide, tall = max(wide, used), tall + row_height
        zoom = min(VIEW[0] / wide, VIEW[1] / tall)
        if zoom > best_zoom:
            best_zoom, best_limit = zoom, limit
    offsets = [(0, 0)] * len(sizes)
    y = 0
    for row in reversed(_rows(widths, best_limit)) if sizes else ():
        x = 0
        for index in row:
            offsets[index] = (x, y)
            x += widths[index]
        y += max(sizes[i][1] for i in row)
    return offsets


def block_of(node: GraphNode) -> str:
    """The session whose block draws `node`: the first that taught it ("" for none)."""
    return node.sessions[0] if node.sessions else ""


def newest_blocks(
    nodes: list[GraphNode],
    session_order: Sequence[str],
    limit: int = DRAW_LIMIT,
    max_blocks: int = BLOCK_LIMIT,
) -> tuple[list[GraphNode], int]:
    """What to draw of `nodes`: whole session blocks, newest first, while they fit in
    `limit` nodes and `max_blocks` blocks (a first block bigger than `limit` is cut to it).
    Returns the nodes, in their given order, and how many blocks they make."""
    members_of: dict[str, list[GraphNode]] = {}
    for node in nodes:
        members_of.setdefault(block_of(node), []).append(node)
    if len(nodes) <= limit and len(members_of) <= max_blocks:
        return list(nodes), len(members_of)
    rank = {chat_id: i for i, chat_id in enumerate(session_order)}
    newest_first = sorted(members_of, key=lambda c: (rank.get(c, len(rank)), c), reverse=True)
    kept: set[str] = set()
    room, blocks = limit, 0
    for chat_id in newest_first:
        members = members_of[chat_id]
        if blocks and len(members) > room:
            break
        kept.update(n.id for n in members[:room])
        room, blocks = room - min(len(members), room), blocks + 1
        if room == 0 or blocks == max_blocks:
            break
    return [n for n in nodes if n.id in kept], blocks


def flow_nodes(
    nodes: list[GraphNode],
    edges: list[GraphEdge],
    highlight: str = "",
    session_order: Sequence[str] = (),
    titles: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """React Flow nodes in session blocks of layers; nodes from session `highlight` stand
    out. Each block whose session has a title in `titles` (chat id → title) is headed by it."""
    depth = layers(nodes, edges)
    # In a layer, what a later layer needs comes last: when the layer wraps into columns,
    # those nodes land in the column next to their dependants.
    needed = {e.to for e in edges if e.type == "requires"}
    rank = {chat_id: i for i, chat_id in enumerate(session_order)}
    members_of: dict[str, list[GraphNode]] = {}
    for node in nodes:
        members_of.setdefault(block_of(node), []).append(node)
    blocks: list[list[dict[str, Any]]] = []
    sizes: list[tuple[int, int]] = []
    for chat_id in sorted(members_of, key=lambda c: (rank.get(c, len(rank)), c)):
        block: list[dict[str, Any]] = []
        members = sorted(
            members_of[chat_id],
            key=lambda n: (depth[n.id], n.id in needed, n.statement.lower()),
        )
        layer, x, y, bottom = depth[members[0].id], 0, TITLE_HEIGHT, 0
        for node in members:
            new = bool(highlight) and highlight in node.sessions
            label = node_label(node, new)
            height = NODE_CHROME + LINE_HEIGHT * label_lines(label)
            if depth[node.id] != layer or (y > TITLE_HEIGHT and y + height > COLUMN_MAX_HEIGHT):
                layer, x, y = depth[node.id], x + COLUMN_WIDTH, TITLE_HEIGHT
            block.append(_flow_node(node, label, x, y, new))
            y += height + NODE_GAP
            bottom = max(bottom, y)
        if title := (titles or {}).get(chat_id, ""):
            block.append(_session_title(chat_id, title, x + NODE_WIDTH))
        blocks.append(block)
        sizes.append((x + COLUMN_WIDTH + SESSION_GAP, bottom + SESSION_GAP))
    return [
        _shift(item, dx, dy)
        for block, (dx, dy) in zip(blocks, pack_rows(sizes), strict=True)
        for item in block
    ]


def fit_view_options(
    drawn: list[GraphNode], items: list[dict[str, Any]], session_order: Sequence[str]
) -> dict[str, Any]:
    """React Flow's first fit: the whole drawing when it is readable at that zoom, else
    the newest session block (with its title), no larger than life; never below
    READABLE_ZOOM (the fit-view button, with options of its own, still shows it all)."""
    options: dict[str, Any] = {"padding": 0.1, "minZoom": READABLE_ZOOM}
    boxes = [
        (item["position"]["x"], item["position"]["y"], item["data"]["label"])
        for item in items
        if not item["id"].startswith("session-title-")
    ]
    if not boxes:
        return options
    wide = max(x for x, _, _ in boxes) - min(x for x, _, _ in boxes) + NODE_WIDTH
    tall = max(y + NODE_CHROME + LINE_HEIGHT * label_lines(label) for _, y, label in boxes)
    tall -= min(y for _, y, _ in boxes)
    blocks = {block_of(n) for n in drawn}
    if len(blocks) < 2 or min(VIEW[0] / wide, VIEW[1] / tall) >= FOCUS_BELOW:
        return options
    rank = {chat_id: i for i, chat_id in enumerate(session_order)}
    newest = max(blocks, key=lambda c: (rank.get(c, len(rank)), c))
    focus = [{"id": n.id} for n in drawn if block_of(n) == newest]
    focus.append({"id": f"session-title-{newest}"})
    return {**options, "nodes": focus, "maxZoom": 1}


def flow_edges(nodes: list[GraphNode], edges: list[GraphEdge]) -> list[dict[str, Any]]:
    """Requires: solid arrow from prerequisite to dependant; supports: dashed, no arrow."""
    named = {n.id: clip(plain_math(n.statement), EDGE_NAME_CHARS) for n in nodes}
    out = []
    for edge in edges:
        if edge.from_ not in named or edge.to not in named:
            continue
        requires = edge.type == "requires"
        item: dict[str, Any] = {
            "id": f"{edge.to}-{edge.type}-{edge.from_}",
            "source": edge.to,
            "target": edge.from_,
            "label": REQUIRES_LABEL if requires else edge.type,
            # React Flow's own name is "Edge from node-3f2a… to node-91c0…"; `from`
            # requires `to` (so `to` is needed for `from`), and `from` supports `to`
            "ariaLabel": f"{named[edge.to]} — needed for — {named[edge.from_]}"
            if requires
            else f"{named[edge.from_]} — supports — {named[edge.to]}",
            "focusable": False,  # an edge has no action: keep Tab on nodes
            "style": {"stroke": "#64748b", "strokeWidth": 2}
            if requires
            else {"stroke": "#94a3b8", "strokeWidth": 1.5, "strokeDasharray": "6 4"},
        }
        if requires:
            item["markerEnd"] = {"type": "arrowclosed", "color": "#64748b"}
        out.append(item)
    return out
