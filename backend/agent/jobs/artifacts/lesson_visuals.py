"""Offline diagrams that draw what the built-in lessons' briefs describe: fraction bars of
equal length split and shaded as the brief says, and a leaf cell with the inputs and
outputs of photosynthesis."""

from __future__ import annotations

import re
from html import escape

BAR_WIDTH = 400
BAR_HEIGHT = 34
_PARTS = re.compile(r"split into (\d{1,2}) (?:equal )?parts?,? with (\d{1,2}) shaded", re.I)
_HEAD = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" role="img" '
    'aria-label="{label}" font-family="sans-serif" font-size="14"><title>{label}</title>'
)


def fraction_pairs(brief: str) -> list[tuple[int, int]]:
    """(shaded, parts) for each bar the brief describes ("split into 5 parts with 3
    shaded"), keeping those that make sense (1–24 parts, no more shaded than parts)."""
    pairs = [(int(m.group(2)), int(m.group(1))) for m in _PARTS.finditer(brief)]
    return [(s, p) for s, p in pairs if 1 <= p <= 24 and 0 <= s <= p][:4]


def fraction_bars_svg(pairs: list[tuple[int, int]]) -> tuple[str, str]:
    """(svg, caption): one bar per (shaded, parts), all the same length, each split into
    its parts with the shaded ones filled; labelled with its fraction."""
    left, top, gap = 90, 20, 30
    height = top + len(pairs) * (BAR_HEIGHT + gap)
    label = " and ".join(f"{s}/{p}" for s, p in pairs) + " as fraction bars"
    out = [_HEAD.format(w=left + BAR_WIDTH + 30, h=height, label=escape(label))]
    for row, (shaded, parts) in enumerate(pairs):
        y = top + row * (BAR_HEIGHT + gap)
        out.append(
            f'<text x="{left - 14}" y="{y + BAR_HEIGHT / 2 + 5:.0f}" text-anchor="end" '
            f'font-size="18">{shaded}/{parts}</text>'
        )
        width = BAR_WIDTH / parts
        for k in range(parts):
            fill = "#4a7bd0" if k < shaded else "#ffffff"
            out.append(
                f'<rect x="{left + k * width:.2f}" y="{y}" width="{width:.2f}" '
                f'height="{BAR_HEIGHT}" fill="{fill}" stroke="#333" stroke-width="1"/>'
            )
    out.append("</svg>")
    values = {round(s / p, 9) for s, p in pairs}
    if len(pairs) >= 2 and len(values) == 1:
        equal = " = ".join(f"{s}/{p}" for s, p in pairs)
        caption = f"The shaded lengths match: {equal}."
    else:
        caption = "Each bar is one whole; the shaded part is the fraction."
    return "".join(out), caption


def _arrow(x1: int, y1: int, x2: int, y2: int, colour: str) -> str:
    return (
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{colour}" stroke-width="4" '
        f'marker-end="url(#head-{colour[1:]})"/>'
    )


def _marker(colour: str) -> str:
    return (
        f'<marker id="head-{colour[1:]}" viewBox="0 0 10 10" refX="8" refY="5" '
        'markerWidth="5" markerHeight="5" orient="auto-start-reverse">'
        f'<path d="M0 0L10 5L0 10z" fill="{colour}"/></marker>'
    )


IN_LIGHT, IN_WATER, IN_CO2, OUT = "#e6a700", "#1a73e8", "#6d6d6d", "#188038"


def leaf_cell_svg() -> tuple[str, str]:
    """(svg, caption): a leaf cell with chloroplasts; light, water and carbon dioxide
    going in, glucose and oxygen coming out, and the word equation."""
    label = "Photosynthesis in a leaf cell: inputs and outputs"
    out = [
        _HEAD.format(w=640, h=400, label=escape(label)),
        "<defs>" + "".join(_marker(c) for c in (IN_LIGHT, IN_WATER, IN_CO2, OUT)) + "</defs>",
        '<rect x="200" y="110" width="240" height="170" rx="40" fill="#e6f4ea" '
        'stroke="#188038" stroke-width="3"/>',
        '<text x="320" y="135" text-anchor="middle" font-weight="bold">leaf cell</text>',
    ]
    for cx, cy in ((260, 180), (330, 165), (390, 200), (285, 240), (365, 250)):
        out.append(
            f'<ellipse cx="{cx}" cy="{cy}" rx="26" ry="13" fill="#34a853" stroke="#0b5d1e"/>'
        )
    out += [
        '<text x="320" y="300" text-anchor="middle" font-size="12">chloroplasts (green) '
        "hold chlorophyll</text>",
        _arrow(320, 20, 320, 100, IN_LIGHT),
        f'<text x="332" y="45" fill="{IN_LIGHT}" font-weight="bold">light energy</text>',
        _arrow(60, 330, 205, 262, IN_WATER),
        f'<text x="20" y="352" fill="{IN_WATER}" font-weight="bold">water (H₂O)</text>',
        f'<text x="20" y="370" fill="{IN_WATER}" font-size="12">from the roots</text>',
        _arrow(30, 170, 195, 170, IN_CO2),
        f'<text x="20" y="155" fill="{IN_CO2}" font-weight="bold">carbon dioxide (CO₂)</text>',
        f'<text x="20" y="195" fill="{IN_CO2}" font-size="12">from the air</text>',
        _arrow(445, 170, 610, 130, OUT),
        f'<text x="470" y="120" fill="{OUT}" font-weight="bold">oxygen (O₂)</text>',
        f'<text x="470" y="102" fill="{OUT}" font-size="12">out to the air</text>',
        _arrow(445, 240, 610, 270, OUT),
        f'<text x="470" y="292" fill="{OUT}" font-weight="bold">glucose (sugar)</text>',
        f'<text x="470" y="310" fill="{OUT}" font-size="12">food for the plant</text>',
        '<text x="320" y="390" text-anchor="middle" font-size="15">carbon dioxide + water '
        "+ light → glucose + oxygen</text>",
        "</svg>",
    ]
    caption = "In: light, water and carbon dioxide. Out: glucose (the plant's food) and oxygen."
    return "".join(out), caption
