"""The SVG and demo-HTML sanitisers against hostile inputs."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from backend.agent.jobs.sanitise import (
    DEMO_CSP,
    UnsafeArtifact,
    check_demo_html,
    demo_srcdoc,
    sanitise_svg,
)
from backend.core.errors import ToolError

RECT = '<rect width="4" height="4" fill="red"/>'


def svg(inner: str, attrs: str = "") -> str:
    return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"{attrs}>{inner}{RECT}</svg>'


def assert_inert_svg(out: str) -> None:
    assert out.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    low = out.lower().replace('xmlns="http://www.w3.org/2000/svg"', "", 1)
    for bad in (
        "<script",
        "foreignobject",
        "javascript",
        "http:",
        "https:",
        "//evil",
        "<animate",
        "<set",
    ):
        assert bad not in low, (bad, out)
    assert not re.search(r"\son[a-z]+\s*=", low), out
    ET.fromstring(out)  # well-formed
    assert sanitise_svg(out) == out  # idempotent


@pytest.mark.parametrize(
    "hostile",
    [
        svg("<script>alert(1)</script>"),
        svg('<script xlink:href="http://evil/x.js" xmlns:xlink="http://www.w3.org/1999/xlink"/>'),
        svg("", ' onload="alert(1)"'),
        svg("", ' ONLOAD="alert(1)"'),
        svg("", ' OnMouseOver = "alert(1)"'),
        svg('<circle r="2" onclick="alert(1)" oNcLiCk="x"/>'),
        svg(
            '<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">'
            '<img src="x" onerror="alert(1)"/></div></foreignObject>'
        ),
        svg('<a href="javascript:alert(1)"><circle r="1"/></a>'),
        svg('<a href="jav&#x09;ascript&#58;alert(1)"><circle r="1"/></a>'),
        svg('<a href=" &#x6A;avascript:alert(1)"><circle r="1"/></a>'),
        svg('<use href="http://evil/sprite.svg#icon"/>'),
        svg('<use xmlns:xlink="http://www.w3.org/1999/xlink" xlink:href="https://evil/s.svg#a"/>'),
        svg('<use href="//evil/s.svg#a"/>'),
        svg('<image href="http://evil/track.png" width="5" height="5"/>'),
        svg('<rect width="1" height="1" fill="url(http://evil/p.svg#g)"/>'),
        svg('<rect width="1" height="1" style="fill: url( \'https://evil/x\' ); stroke: red"/>'),
        svg('<rect width="1" height="1" style="background: u\\72l(http://evil/x)"/>'),
        svg("<style>@import url(http://evil/x.css); rect { fill: url(http://evil/y) }</style>"),
        svg('<animate attributeName="href" to="javascript:alert(1)"/>'),
        svg('<set attributeName="onmouseover" to="alert(1)"/>'),
        svg('<iframe xmlns="http://www.w3.org/1999/xhtml" src="http://evil"/>'),
    ],
)
def test_svg_hostile_inputs_come_out_inert(hostile: str) -> None:
    out = sanitise_svg(hostile)
    assert_inert_svg(out)
    assert "<rect" in out  # the drawing itself survives


def test_svg_keeps_internal_references_and_text() -> None:
    out = sanitise_svg(
        '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" '
        'xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 9 9">'
        '<defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient>'
        '<marker id="m"><path d="M0 0L1 1"/></marker></defs>'
        '<rect width="2" height="2" fill="url(#g)"/><use xlink:href="#m"/>'
        '<line x2="5" marker-end="url(#m)"/><text x="1" y="2">a &lt; b &amp; c</text></svg>'
    )
    assert 'fill="url(#g)"' in out and 'href="#m"' in out and 'marker-end="url(#m)"' in out
    assert "a &lt; b &amp; c" in out
    assert_inert_svg(out)


@pytest.mark.parametrize(
    "broken",
    [
        "<svg/onload=alert(1)>",
        "<p>no svg here</p>",
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><p>x</p></foreignObject></svg>',
        '<!DOCTYPE svg [<!ENTITY x "boom">]><svg><text>&x;</text></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>',
        '<html><svg xmlns="http://www.w3.org/2000/svg"></svg></html>',
        "<svg>" + "<g>" * 100 + RECT + "</g>" * 100 + "</svg>",
    ],
)
def test_svg_with_nothing_valid_left_raises_a_typed_error(broken: str) -> None:
    with pytest.raises(UnsafeArtifact):
        sanitise_svg(broken)
    assert issubclass(UnsafeArtifact, ToolError)


def test_svg_size_limit() -> None:
    with pytest.raises(UnsafeArtifact, match="limit"):
        sanitise_svg(svg("<desc>" + "x" * 300_000 + "</desc>"))


# ---- demo pages -------------------------------------------------------------------------

EXTERNAL = re.compile(r"(https?:)?//evil", re.I)


@pytest.mark.parametrize(
    "hostile",
    [
        '<script src="http://evil/x.js"></script>',
        '<SCRIPT SRC = "HTTPS://evil/x.js"></SCRIPT>',
        "<script\nsrc=//evil/x.js></script>",
        '<link rel="stylesheet" href="https://evil/x.css">',
        '<LINK REL=dns-prefetch HREF="//evil">',
        '<img src="http://evil/pixel.png">',
        '<img/src="http://evil/p.png">',
        '<img src=" &#104;ttp://evil/p.png" srcset="http://evil/p2.png 2x">',
        '<div style="background: url(http://evil/bg.png)">x</div>',
        "<div style=\"background: URL( 'https://evil/bg.png' )\">x</div>",
        "<style>@import 'http://evil/x.css'; body { background: url(\"http://evil/b\") }</style>",
        "<style>body { background: u\\72 l(http://evil/b) }</style>",
        '<meta http-equiv="refresh" content="0; url=http://evil/">',
        '<base href="http://evil/">',
        '<iframe src="http://evil/"></iframe>',
        '<object data="http://evil/x.swf"><embed src="http://evil/y"></object>',
        '<form action="http://evil/collect"><button formaction="https://evil/b">go</button></form>',
        '<a href="http://evil/">link</a>',
        '<a href="javascript:alert(1)">js</a>',
        '<svg><use href="http://evil/s.svg#a"/><image xlink:href="https://evil/i.png"/></svg>',
        '<video poster="http://evil/p.png"></video>',
    ],
)
def test_demo_external_references_are_removed(hostile: str) -> None:
    out = check_demo_html(f"<!DOCTYPE html><html><body><p>demo</p>{hostile}</body></html>")
    assert not EXTERNAL.search(out), out
    assert "javascript:" not in out.lower()
    assert "<p>demo</p>" in out


def test_demo_keeps_inline_script_handlers_and_data_images() -> None:
    page = (
        "<!DOCTYPE html><html><head><style>b { color: red }</style></head><body>"
        '<input id="s" type="range" oninput="show()"><output id="o"></output>'
        '<img src="data:image/png;base64,iVBORw0KGgo=" alt="dot"><a href="#top">top</a>'
        "<script>function show(){ if (1 < 2 && 3 > 2) o.textContent = s.value; }"
        " fetch('/api');</script></body></html>"
    )
    out = check_demo_html(page)
    assert "function show(){ if (1 < 2 && 3 > 2) o.textContent = s.value; }" in out
    assert 'oninput="show()"' in out
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in out and 'href="#top"' in out
    assert "b { color: red }" in out
    assert check_demo_html(out) == out  # stable on its own output


@pytest.mark.parametrize(
    "tricky",
    [
        "<!--><img src=http://evil/x>-->",  # a browser ends this comment at "<!-->"
        "<![CDATA[<img src=http://evil/y>]]>",
        "<?php <img src=http://evil/y> ?>",
    ],
)
def test_demo_text_the_parser_skipped_cannot_hide_markup(tricky: str) -> None:
    out = check_demo_html(f"<p>1 < 2</p>{tricky}<p>end</p>")
    assert not EXTERNAL.search(out), out
    assert out.startswith("<p>1 &lt; 2</p>") and out.endswith("<p>end</p>")


def test_demo_ambiguous_script_end_is_refused() -> None:
    with pytest.raises(UnsafeArtifact, match="ambiguous"):
        check_demo_html('<script>x = 1</script foo><img src="http://evil/p.png"></script>')


def test_demo_size_limit_and_empty_page() -> None:
    with pytest.raises(UnsafeArtifact, match="limit"):
        check_demo_html("<p>" + "é" * 100_001 + "</p>")  # 200 002 bytes in UTF-8
    assert check_demo_html("<p>" + "x" * 1000 + "</p>", max_bytes=2000)
    with pytest.raises(UnsafeArtifact, match="empty"):
        check_demo_html("  \n ")


def test_demo_srcdoc_puts_the_csp_first() -> None:
    doc = demo_srcdoc("<!doctype html><html><body><script>fetch('x')</script></body></html>")
    assert doc.startswith('<!DOCTYPE html><meta http-equiv="Content-Security-Policy"')
    assert DEMO_CSP == (
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"
    )
    assert doc.count("<!DOCTYPE") + doc.count("<!doctype") == 1
    assert doc.index(DEMO_CSP) < doc.index("<script>")
