"""`sanitise_svg`: parse as XML, keep an allowlist, re-serialise from the cleaned tree.

The output is written by our own serialiser, so nothing the parser skipped can survive:
no scripts, no `foreignObject`, no event handlers, no animation (which can rewrite
`href`), no reference that is not a same-document `#fragment`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html import escape

from backend.agent.jobs.css_clean import allowed_ref, clean_css, compact
from backend.agent.jobs.errors import UnsafeArtifact

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
MAX_SVG_BYTES = 200_000
_MAX_DEPTH = 64
_MAX_ELEMENTS = 5_000

_SHAPES = {"path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text", "use"}
_CONTAINERS = {"svg", "g", "defs", "symbol", "marker", "clipPath", "mask", "pattern"}
_PAINT = {"linearGradient", "radialGradient", "stop", "filter", "feGaussianBlur", "feOffset",
          "feBlend", "feFlood", "feComposite", "feMerge", "feMergeNode", "feDropShadow",
          "feColorMatrix"}  # fmt: skip
_TEXTUAL = {"title", "desc", "tspan", "textPath", "style"}
ELEMENTS = _SHAPES | _CONTAINERS | _PAINT | _TEXTUAL
_UNWRAP = {"a", "switch"}  # harmless wrappers: keep their drawing, drop the element

ATTRIBUTES = frozenset(
    """id class style x y x1 y1 x2 y2 cx cy r rx ry fx fy fr width height d points viewBox
    preserveAspectRatio transform fill fill-opacity fill-rule stroke stroke-width
    stroke-opacity stroke-dasharray stroke-dashoffset stroke-linecap stroke-linejoin
    stroke-miterlimit opacity color font-family font-size font-weight font-style text-anchor
    dominant-baseline alignment-baseline letter-spacing word-spacing text-decoration dx dy
    rotate textLength lengthAdjust startOffset offset stop-color stop-opacity gradientUnits
    gradientTransform spreadMethod markerWidth markerHeight refX refY orient markerUnits
    marker-start marker-mid marker-end clip-path clip-rule clipPathUnits mask maskUnits
    maskContentUnits patternUnits patternContentUnits patternTransform filter filterUnits
    primitiveUnits in in2 result stdDeviation mode operator k1 k2 k3 k4 flood-color
    flood-opacity type values vector-effect pathLength visibility display version role
    aria-label aria-hidden aria-labelledby aria-describedby href""".split()  # noqa: SIM905
)
_REFERENCE = {"href"}


def _name(tag: str) -> str | None:
    """Local name of an SVG-namespace (or un-namespaced) element/attribute, else None."""
    if tag.startswith("{"):
        ns, _, local = tag[1:].partition("}")
        return local if ns in (SVG_NS, XLINK_NS) else None
    return tag


def _attr_value_ok(name: str, value: str) -> bool:
    flat = compact(value)
    if name in _REFERENCE:
        return allowed_ref(value, allow_data=False)
    if "javascript:" in flat or "expression(" in flat:
        return False
    urls = re.findall(r"url\((['\"]?)(.*?)\1\)", flat)
    return flat.count("url(") == len(urls) and all(t.startswith("#") for _, t in urls)


def _attrs(el: ET.Element) -> str:
    out = []
    for raw, value in el.attrib.items():
        name = _name(raw)
        if raw.startswith("{" + XLINK_NS) and name != "href":
            continue
        if name not in ATTRIBUTES:
            continue
        if name == "style":
            value = clean_css(value, allow_data=False)
            if not value.strip():
                continue
        elif not _attr_value_ok(name, value):
            continue
        out.append(f' {name}="{escape(value, quote=True)}"')
    return "".join(out)


class _Writer:
    def __init__(self) -> None:
        self.out: list[str] = []
        self.drawn = 0
        self.seen = 0

    def element(self, el: ET.Element, depth: int) -> None:
        self.seen += 1
        if depth > _MAX_DEPTH or self.seen > _MAX_ELEMENTS:
            raise UnsafeArtifact("svg is nested too deeply or has too many elements")
        tag: object = el.tag  # a comment's or processing instruction's is a function
        name = _name(tag) if isinstance(tag, str) else None
        if name in _UNWRAP:
            self.children(el, depth)
        elif name in ELEMENTS:
            assert name is not None
            self.drawn += name in _SHAPES
            root = ' xmlns="http://www.w3.org/2000/svg"' if depth == 0 else ""
            self.out.append(f"<{name}{root}{_attrs(el)}>")
            if name == "style":
                self.out.append(escape(clean_css(el.text or "", allow_data=False), quote=False))
            else:
                self.children(el, depth)
            self.out.append(f"</{name}>")

    def children(self, el: ET.Element, depth: int) -> None:
        if el.text:
            self.out.append(escape(el.text, quote=False))
        for child in el:
            self.element(child, depth + 1)
            if child.tail:
                self.out.append(escape(child.tail, quote=False))


def _extract(svg: str) -> str:
    """The `<svg>…</svg>` span; a prolog (XML declaration, DOCTYPE, fences) is dropped."""
    if "<!ENTITY" in svg.upper():
        raise UnsafeArtifact("svg declares entities; refused")
    start, end = svg.find("<svg"), svg.rfind("</svg>")
    if start < 0 or end < start:
        raise UnsafeArtifact("no <svg> element found")
    return svg[start : end + len("</svg>")]


def sanitise_svg(svg: str, *, max_bytes: int = MAX_SVG_BYTES) -> str:
    """Return a safe re-serialisation of `svg`, or raise `UnsafeArtifact`."""
    if len(svg.encode()) > max_bytes:
        raise UnsafeArtifact(f"svg is {len(svg.encode())} bytes; the limit is {max_bytes}")
    try:
        root = ET.fromstring(_extract(svg))
    except ET.ParseError as exc:
        raise UnsafeArtifact(f"svg is not well-formed XML: {exc}") from None
    if _name(root.tag) != "svg":
        raise UnsafeArtifact("the root element is not <svg>")
    writer = _Writer()
    writer.element(root, 0)
    if not writer.drawn:
        raise UnsafeArtifact("nothing drawable remains after sanitising")
    return "".join(writer.out)
