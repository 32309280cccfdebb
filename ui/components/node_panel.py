"""The side panel's detail of one graph node: its statement and state, why it is there,
the action (practise or learn it), the evidence quotes, the probe history and sessions."""

from __future__ import annotations

import reflex as rx

from ui.components.safe_markdown import safe_markdown
from ui.model.graph_view import BADGE_SCHEMES, ProbeRow, Quote
from ui.model.memory_view import MemoryLine
from ui.state.home_state import HomeState

H = HomeState


# What the panel and the sessions list give to read is body text: 16 px (size "3"), as
# UX.md asks; only dates and counts beside it are smaller.
def _probe(probe: ProbeRow) -> rx.Component:
    return rx.box(
        safe_markdown(probe.question),
        rx.hstack(rx.text("Your answer:", size="3"), safe_markdown(probe.answer), align="baseline"),
        rx.text(
            probe.verdict,
            " · ",
            probe.when,
            " · ",
            rx.link(probe.session_title, href="/chat/" + probe.session),
            size="1",
            color_scheme="gray",
        ),
        padding_y="0.4em",
        border_bottom=f"1px solid {rx.color('gray', 4)}",
    )


def _quote(quote: Quote) -> rx.Component:
    return rx.box(
        rx.text(quote.who, size="1", color_scheme="gray", weight="medium"),
        rx.blockquote(safe_markdown(quote.text), size="3"),
    )


def _node_head() -> rx.Component:
    """The node's state (and a misconception mark) with the Close button."""
    d = H.selected
    return rx.hstack(
        rx.badge(
            d.icon,
            " ",
            d.state_label,
            color_scheme=rx.match(d.state, *BADGE_SCHEMES.items(), "gray"),
            # Radix's teal text is 4.1:1 on its soft fill in the light theme (axe wants 4.5)
            high_contrast=d.state == "resolved",
            variant=rx.cond(d.state == "unseen", "outline", "soft"),
            size="2",
        ),
        rx.cond(
            (d.kind == "misconception") & (d.state != "misconception"),
            rx.badge("misconception", variant="outline", color_scheme="red"),
        ),
        rx.spacer(),
        rx.icon_button(
            rx.icon("x", size=16),
            on_click=H.close_detail,
            variant="ghost",
            aria_label="Close the node's details",
            id="node-panel-close",
        ),
        width="100%",
        align="center",
    )


def _memory_line(line: MemoryLine) -> rx.Component:
    return rx.text(rx.text.strong(line.label, ": "), line.value, size="3")


def _memory() -> rx.Component:
    """How well it is remembered, and for a cleared-up mix-up, which answer cleared it."""
    d = H.selected
    r = d.resolved
    return rx.fragment(
        rx.cond(
            d.has_resolution,
            rx.callout.root(
                rx.callout.icon(rx.icon("circle-check-big")),
                rx.callout.text(
                    "Cleared up on ",
                    r.when,
                    " in ",
                    # underlined: a link inside a sentence is told apart by more than colour
                    rx.link(
                        r.session_title,
                        href="/chat/" + r.session,
                        underline="always",
                        color_scheme="teal",
                        high_contrast=True,
                    ),
                    ": asked “",
                    r.question,
                    "”, you answered “",
                    r.answer,
                    "”.",
                ),
                color_scheme="teal",
                high_contrast=True,  # teal text on teal is 4.1:1 in the light theme
                size="1",
                id="node-resolved",
            ),
        ),
        rx.cond(
            d.memory.length() > 0,
            rx.vstack(rx.foreach(d.memory, _memory_line), spacing="1", id="node-memory"),
        ),
    )


def _node_history() -> list[rx.Component]:
    """Evidence quotes, the probe history and the sessions the node came from."""
    d = H.selected
    return [
        rx.heading("Evidence", size="2", as_="h3"),
        rx.cond(
            d.quotes.length() > 0,
            rx.vstack(rx.foreach(d.quotes, _quote), spacing="2"),
            rx.text("No quotes recorded.", size="3", color_scheme="gray"),
        ),
        rx.heading("Probe history", size="2", as_="h3"),
        rx.cond(
            d.probes.length() > 0,
            rx.vstack(rx.foreach(d.probes, _probe), spacing="0", width="100%"),
            rx.text(d.no_probes, size="3", color_scheme="gray"),
        ),
        rx.heading("Sessions", size="2", as_="h3"),
        rx.vstack(
            rx.foreach(d.sessions, lambda s: rx.link(s.title, href="/chat/" + s.id, size="3")),
            spacing="1",
            id="node-sessions",
        ),
    ]


def node_panel() -> rx.Component:
    d = H.selected
    return rx.vstack(
        _node_head(),
        # markdown, so a statement's math renders as it does in the classroom; a heading
        # role (not an h2 element), since markdown renders paragraphs
        rx.box(
            safe_markdown(d.statement),
            role="heading",
            aria_level=2,
            font_size="1.25em",
            font_weight="bold",
            line_height="1.35",
            id="node-statement",
        ),
        rx.cond(
            d.note != "",
            rx.text(d.note, size="3", color_scheme="gray", id="node-note"),
        ),
        _memory(),
        rx.button(
            rx.match(
                d.aim,
                ("learn", rx.icon("book-open")),
                ("review", rx.icon("rotate-ccw")),
                rx.icon("dumbbell"),
            ),
            d.action,
            on_click=H.practise,
            loading=H.creating,
            size="2",
            id="practise-this",
        ),
        *_node_history(),
        spacing="3",
        width="100%",
        id="node-panel",
    )
