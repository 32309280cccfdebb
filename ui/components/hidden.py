"""Text for screen readers only: out of sight, still in the accessibility tree."""

from __future__ import annotations

VISUALLY_HIDDEN = {
    "position": "absolute",
    "width": "1px",
    "height": "1px",
    "overflow": "hidden",
    "clip_path": "inset(50%)",
    "white_space": "nowrap",
}
"""Style of an element a screen reader reads but the eye does not see."""

SHOWN_WHEN_FOCUSED = {
    **VISUALLY_HIDDEN,
    "&:focus-visible": {
        "position": "static",
        "width": "auto",
        "height": "auto",
        "clip_path": "none",
    },
}
"""Hidden until keyboard focus lands on it (a skip link)."""
