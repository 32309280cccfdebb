"""Offline SVG diagrams: a tree, a flow (or cycle) of steps, and a plotted curve."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from html import escape

from backend.agent.jobs.artifacts.keywords import clip

_HEAD = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" role="img" '
    'aria-label="{label}" font-family="sans-serif" font-size="13">'
    "<title>{label}</title>"
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
    'markerHeight="7" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="#555"/>'
    "</marker></defs>"
)


LINE_CHARS, MAX_LINES, LINE_HEIGHT = 22, 3, 15


def box_lines(label: str) -> list[str]:
    """A box's label wrapped at words into at most `MAX_LINES` lines (the last one clipped)."""
    lines = textwrap.wrap(" ".join(label.split()), LINE_CHARS) or [""]
    if len(lines) > MAX_LINES:
        rest = " ".join(lines[MAX_LINES - 1 :])
        last = textwrap.shorten(rest, LINE_CHARS, placeholder="…")  # cut at a word
        lines = [*lines[: MAX_LINES - 1], last if last != "…" else clip(rest, LINE_CHARS)]
    return lines


def box_height(label: str) -> int:
    return 20 + LINE_HEIGHT * len(box_lines(label))


def _box(x: float, y: float, label: str, fill: str = "#e8f0fe") -> str:
    """A rounded box centred on (x, y), tall enough for its wrapped label."""
    lines = box_lines(label)
    height = box_height(label)
    first = y + 4 - LINE_HEIGHT * (len(lines) - 1) / 2
    text = "".join(
        f'<tspan x="{x:.0f}" y="{first + LINE_HEIGHT * i:.0f}">{escape(line)}</tspan>'
        for i, line in enumerate(lines)
    )
    return (
        f'<rect x="{x - 80:.0f}" y="{y - height / 2:.0f}" width="160" height="{height}" rx="8" '
        f'fill="{fill}" stroke="#3367d6"/><text text-anchor="middle">{text}</text>'
    )


def _arrow(x1: float, y1: float, x2: float, y2: float) -> str:
    return (
        f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" stroke="#555" '
        'stroke-width="1.5" marker-end="url(#arrow)"/>'
    )


def tree_svg(root: str, children: list[str]) -> str:
    """The root above its children, one arrow each (children capped at 6)."""
    kids = children[:6] or ["(no steps yet)"]
    width = max(400, 180 * len(kids) + 20)
    out = [_HEAD.format(w=width, h=240, label=escape(root)), _box(width / 2, 45, root, "#fde8c8")]
    below_root = 45 + box_height(root) / 2
    for i, kid in enumerate(kids):
        x = 100 + i * 180 + (width - 180 * len(kids) - 20) / 2
        out += [_arrow(width / 2, below_root, x, 185 - box_height(kid) / 2 - 2), _box(x, 185, kid)]
    return "".join(out) + "</svg>"


def flow_svg(title: str, steps: list[str], *, cycle: bool) -> str:
    """Steps left to right with arrows; a cycle also loops back from last to first."""
    steps = steps[:5] or [title]
    width = 200 * len(steps) + 20
    out = [_HEAD.format(w=width, h=160 if cycle else 125, label=escape(title))]
    for i, step in enumerate(steps):
        x = 110 + 200 * i
        out.append(_box(x, 60, step))
        if i:
            out.append(_arrow(x - 110, 60, x - 82, 60))
    if cycle and len(steps) > 1:
        last = 110 + 200 * (len(steps) - 1)
        start, end = 60 + box_height(steps[-1]) / 2, 60 + box_height(steps[0]) / 2 + 2
        out.append(
            f'<path d="M{last} {start:.0f} V140 H110 V{end:.0f}" fill="none" stroke="#555" '
            'stroke-width="1.5" marker-end="url(#arrow)"/>'
        )
    return "".join(out) + "</svg>"


CURVES: dict[str, tuple[str, Callable[[float], float], tuple[float, float]]] = {
    "sine": ("y = sin(x)", math.sin, (0.0, 2 * math.pi)),
    "exponential": ("y = 2^x", lambda x: 2**x, (0.0, 5.0)),
    "parabola": ("y = x²", lambda x: x * x, (-3.0, 3.0)),
}


def curve_svg(title: str, curve: str) -> str:
    """Axes and a 60-point polyline of one of `CURVES`."""
    label, fn, (lo, hi) = CURVES[curve]
    xs = [lo + (hi - lo) * i / 60 for i in range(61)]
    ys = [fn(x) for x in xs]
    y_lo, y_hi = min(min(ys), 0.0), max(ys)

    def px(x: float, y: float) -> str:
        return f"{40 + 400 * (x - lo) / (hi - lo):.1f},{260 - 220 * (y - y_lo) / (y_hi - y_lo):.1f}"

    zero_y = 260 - 220 * (0 - y_lo) / (y_hi - y_lo)
    return (
        _HEAD.format(w=480, h=300, label=escape(title))
        + f'<line x1="40" y1="{zero_y:.1f}" x2="450" y2="{zero_y:.1f}" stroke="#999" '
        'marker-end="url(#arrow)"/>'
        '<line x1="40" y1="270" x2="40" y2="20" stroke="#999" marker-end="url(#arrow)"/>'
        f'<polyline points="{" ".join(px(x, y) for x, y in zip(xs, ys, strict=True))}" '
        'fill="none" stroke="#d93025" stroke-width="2"/>'
        f'<text x="60" y="36" fill="#d93025">{escape(label)}</text>'
        f'<text x="240" y="292" text-anchor="middle">{escape(clip(title, 48))}</text></svg>'
    )
