"""A chart spec drawn as a small static SVG (shown as an image, so nothing in it can run)."""

from __future__ import annotations

from html import escape

from shared_contracts.jobs import ChartSpec

WIDTH, HEIGHT, PAD = 480, 300, 40
COLOURS = ("#3b82f6", "#f59f00", "#2f9e44", "#e03131", "#7048e8")


def _scale(lo: float, hi: float, size: float, flip: bool = False):
    span = (hi - lo) or 1.0

    def to(v: float) -> float:
        t = (v - lo) / span
        return PAD + (1 - t if flip else t) * size

    return to


def chart_svg(spec: ChartSpec) -> str:
    """Line, bar or scatter series on shared axes, with axis labels and a legend."""
    xs = [x for s in spec.series for x in s.x] or [0.0, 1.0]
    ys = [y for s in spec.series for y in s.y] or [0.0, 1.0]
    sx = _scale(min(xs), max(xs), WIDTH - 2 * PAD)
    sy = _scale(min(0.0, min(ys)), max(ys), HEIGHT - 2 * PAD, flip=True)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
        'stroke="#444"/>',
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="#444"/>',
        f'<text x="{WIDTH / 2}" y="{HEIGHT - 8}" text-anchor="middle">'
        f"{escape(spec.x_label)}</text>",
        f'<text x="12" y="{HEIGHT / 2}" transform="rotate(-90 12 {HEIGHT / 2})" '
        f'text-anchor="middle">{escape(spec.y_label)}</text>',
    ]
    bar_w = max(4.0, (WIDTH - 2 * PAD) / max(1, len(xs)) / max(1, len(spec.series)) * 0.8)
    for index, series in enumerate(spec.series):
        colour = COLOURS[index % len(COLOURS)]
        points = list(zip(series.x, series.y, strict=False))
        if spec.kind == "line" and points:
            path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in points)
            out.append(
                f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>'
            )
        elif spec.kind == "bar":
            base = sy(max(0.0, min(ys)))
            for x, y in points:
                top = sy(y)
                left = sx(x) - bar_w / 2 + index * bar_w
                out.append(
                    f'<rect x="{left:.1f}" y="{min(top, base):.1f}" width="{bar_w:.1f}" '
                    f'height="{abs(base - top):.1f}" fill="{colour}"/>'
                )
        else:
            out.extend(
                f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}"/>'
                for x, y in points
            )
        out.append(
            f'<text x="{WIDTH - PAD}" y="{PAD + 14 * index}" text-anchor="end" '
            f'fill="{colour}">{escape(series.name)}</text>'
        )
    out.append("</svg>")
    return "".join(out)
