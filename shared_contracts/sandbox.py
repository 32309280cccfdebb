"""How a generated demo page is framed: the CSP every demo iframe's `srcdoc` starts with.

The UI renders `demo_srcdoc(page.html)` in `<iframe sandbox="allow-scripts"
referrerpolicy="no-referrer">` and never adds `allow-same-origin`. The sandbox gives the
page an opaque origin (no cookies, storage or parent DOM); the CSP stops it reaching the
network (without it a sandboxed page can still `fetch`).
"""

from __future__ import annotations

import re

DEMO_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"
)
DEMO_CSP_META = f'<meta http-equiv="Content-Security-Policy" content="{DEMO_CSP}">'
DEMO_SANDBOX = "allow-scripts"
"""The iframe `sandbox` value. Never add `allow-same-origin`."""

_DOCTYPE = re.compile(r"^\s*<!doctype[^>]*>", re.I)


def demo_srcdoc(html: str) -> str:
    """The iframe `srcdoc` for a demo page: doctype, then the CSP meta, then the page.

    The meta comes before any of the page's own markup, so it governs every script.
    """
    return "<!DOCTYPE html>" + DEMO_CSP_META + _DOCTYPE.sub("", html, count=1)
