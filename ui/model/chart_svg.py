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


def _number(v: float) -> str:
    return f"{v:.4g}"


def _ticks(xs: list[float], sx, ys: list[float], sy) -> list[str]:
    """Values on the axes (each x when there are few, else the ends; the y range's ends),
    so the chart can be read and not only looked at."""
    if len(xs) > 12:
        xs = [xs[0], xs[-1]]
    out = [
        f'<text x="{sx(x):.1f}" y="{HEIGHT - PAD + 14}" text-anchor="middle" fill="#444">'
        f"{_number(x)}</text>"
        for x in xs
    ]
    out += [
        f'<text x="{PAD - 4}" y="{sy(y) + 4:.1f}" text-anchor="end" fill="#444">{_number(y)}</text>'
        for y in ys
    ]
    return out


def chart_svg(spec: ChartSpec) -> str:
    """Line, bar or scatter series on shared axes, with axis labels and a legend."""
    xs = [x for s in spec.series for x in s.x] or [0.0, 1.0]
    ys = [y for s in spec.series for y in s.y] or [0.0, 1.0]
    y_lo, y_hi = min(0.0, min(ys)), max(0.0, max(ys))  # bars grow from zero
    slots = max(1, len(set(xs)))
    # Bars at the ends of the x range need half a slot of room to stay inside the axes.
    half = (max(xs) - min(xs)) / max(1, slots - 1) / 2 if spec.kind == "bar" else 0.0
    if spec.kind == "bar" and half == 0.0:
        half = 0.5
    sx = _scale(min(xs) - half, max(xs) + half, WIDTH - 2 * PAD)
    sy = _scale(y_lo, y_hi, HEIGHT - 2 * PAD, flip=True)
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
        *_ticks(sorted(set(xs)), sx, sorted({y_lo, y_hi}), sy),
    ]
    bar_w = max(4.0, (WIDTH - 2 * PAD) / slots / max(1, len(spec.series)) * 0.8)
    legend_x = float(WIDTH - PAD)
    for index, series in enumerate(spec.series):
        colour = COLOURS[index % len(COLOURS)]
        points = list(zip(series.x, series.y, strict=False))
        if spec.kind == "line" and points:
            path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in points)
            out.append(
                f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>'
            )
        elif spec.kind == "bar":
            base = sy(0.0)
            group = bar_w * len(spec.series)
            for x, y in points:
                top = sy(y)
                left = sx(x) - group / 2 + index * bar_w
                out.append(
                    f'<rect x="{left:.1f}" y="{min(top, base):.1f}" width="{bar_w:.1f}" '
                    f'height="{abs(base - top):.1f}" fill="{colour}"/>'
                )
        else:
            out.extend(
                f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}"/>'
                for x, y in points
            )
        # The legend runs along the band above the plot (inside it, it covered tall bars).
        out.append(
            f'<text x="{legend_x:.1f}" y="{PAD - 12}" text-anchor="end" '
            f'fill="{colour}">{escape(series.name)}</text>'
        )
        legend_x -= 7 * len(series.name) + 16
    out.append("</svg>")
    return "".join(out)
