"""The framed look every side panel and canvas of the pages shares."""

from __future__ import annotations

import reflex as rx

PANEL = {"border": f"1px solid {rx.color('gray', 5)}", "border_radius": "12px"}
"""Style props of a framed panel: `rx.box(..., **PANEL)`."""
