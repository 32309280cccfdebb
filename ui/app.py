"""The Reflex app: Radix theme (light/dark), 16px body; importing the pages registers them
(the replay page is imported here: it is for developers, not in the learner's pages)."""

import reflex as rx

from ui import pages
from ui.pages import replay

STYLE = {
    "font_size": "16px",
    ".lh-markdown p": {"margin": "0.25em 0"},
    ":focus-visible": {"outline": "2px solid var(--accent-9)", "outline_offset": "2px"},
}

app = rx.App(
    theme=rx.theme(appearance="inherit", accent_color="indigo", radius="medium"),
    style=STYLE,
)

__all__ = ["app", "pages", "replay"]
