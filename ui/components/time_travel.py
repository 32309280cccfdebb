"""Time travel on home: a select of moments (now, in 7 or 30 days if nothing is reviewed,
after a past session) and, while another moment is shown, a banner saying which, with one
button back to now."""

from __future__ import annotations

import reflex as rx

from ui.model.time_travel import Moment
from ui.state.home_state import MOMENT_ID, HomeState

H = HomeState


def moment_select() -> rx.Component:
    """ "Your graph: Now ▾": what the graph looked like, or will look like (once the server
    tells which moment a graph is of; one that does not cannot show another)."""
    return rx.cond(H.can_travel, _select())


def _select() -> rx.Component:
    return rx.hstack(
        rx.icon("history", size=16, flex_shrink="0"),
        rx.text("Your graph:", size="2"),
        rx.select.root(
            rx.select.trigger(aria_label="Show your graph at another moment", id=MOMENT_ID),
            rx.select.content(rx.foreach(H.moment_options, _option)),
            value=H.moment,
            on_change=H.show_moment,
        ),
        align="center",
        spacing="2",
    )


def _option(moment: Moment) -> rx.Component:
    return rx.select.item(moment.label, value=moment.key)


def moment_banner() -> rx.Component:
    """Which moment is shown, in a live region that is always in the page (a region added
    with its text is often not read out)."""
    return rx.box(
        rx.cond(
            H.moment_banner != "",
            rx.callout.root(
                rx.callout.icon(rx.icon("history")),
                rx.callout.text(
                    H.moment_banner,
                    " ",
                    rx.button(
                        rx.icon("undo-2", size=14),
                        "Back to now",
                        on_click=H.back_to_now,
                        size="1",
                        variant="solid",
                        id="back-to-now",
                    ),
                ),
                size="1",
                color_scheme="violet",
                variant="outline",
                id="moment-banner",
            ),
        ),
        role="status",
        width="100%",
    )
