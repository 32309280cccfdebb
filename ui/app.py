"""The Reflex app: Radix theme (light/dark), 16px body; importing the pages registers them
(the replay page is imported here: it is for developers, not in the learner's pages)."""

import reflex as rx

from ui import pages
from ui.csp import with_csp
from ui.pages import replay

STYLE = {
    "font_size": "16px",
    ".lh-markdown p": {"margin": "0.25em 0"},
    # Model markdown: tables get cells and scroll sideways on a narrow screen; quotes a rule.
    ".lh-markdown table": {
        "border_collapse": "collapse",
        "margin": "0.5em 0",
        "display": "block",
        "max_width": "100%",
        "overflow_x": "auto",
    },
    ".lh-markdown th": {
        "border": "1px solid var(--gray-6)",
        "padding": "0.3em 0.7em",
        "text_align": "left",
        "background": "var(--gray-3)",
    },
    ".lh-markdown td": {"border": "1px solid var(--gray-6)", "padding": "0.3em 0.7em"},
    ".lh-markdown blockquote": {
        "border_left": "3px solid var(--gray-6)",
        "margin": "0.5em 0",
        "padding_left": "0.8em",
        "color": "var(--gray-11)",
    },
    # The classroom follows a streamed answer (see `classroom`): nothing in the room is a
    # scroll anchor, the box after it is.
    ".lh-room": {"overflow_anchor": "none"},
    ".lh-room *": {"overflow_anchor": "none"},
    ".lh-follow": {"overflow_anchor": "auto"},
    ":focus-visible": {"outline": "2px solid var(--accent-9)", "outline_offset": "2px"},
    # An image from another host, shown as a link to it (`ui.components.safe_markdown`).
    ".lh-foreign-image": {"color": "var(--accent-11)", "text_decoration": "underline"},
}

# The Radix theme is configured in `rxconfig.py` (`App(theme=...)` is deprecated).
# Every page carries the Content-Security-Policy (`ui.csp`).
app = rx.App(style=STYLE, api_transformer=with_csp)

__all__ = ["app", "pages", "replay"]
