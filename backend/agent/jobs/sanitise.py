"""The artifact sanitisers, in one place (stdlib only: `xml.etree` and `html.parser`).

- `sanitise_svg(svg)`: allowlisted SVG re-serialised from a parsed tree.
- `check_demo_html(html)`: size limit, external network references removed.
- `demo_srcdoc(html)`: prepends the CSP meta; the UI renders the result in an iframe with
  `sandbox="allow-scripts"` and never `allow-same-origin` (see `shared_contracts.sandbox`).
"""

from __future__ import annotations

from backend.agent.jobs.errors import UnsafeArtifact
from backend.agent.jobs.html_clean import MAX_DEMO_BYTES, check_demo_html
from backend.agent.jobs.svg_clean import MAX_SVG_BYTES, sanitise_svg
from shared_contracts.sandbox import DEMO_CSP, DEMO_CSP_META, DEMO_SANDBOX, demo_srcdoc

__all__ = [
    "DEMO_CSP",
    "DEMO_CSP_META",
    "DEMO_SANDBOX",
    "MAX_DEMO_BYTES",
    "MAX_SVG_BYTES",
    "UnsafeArtifact",
    "check_demo_html",
    "demo_srcdoc",
    "sanitise_svg",
]
