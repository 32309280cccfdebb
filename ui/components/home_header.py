"""Home's header (title, Review (N), New session, theme, legend, notices, errors), and what
fills the page before there is a graph: the first-session invitation or the load failure."""

from __future__ import annotations

import reflex as rx

from ui.components.account import sign_out_button
from ui.components.export_menu import export_error, export_menu
from ui.components.legend import legend
from ui.components.materials_dialog import add_material_button
from ui.components.review_panel import review_button
from ui.state.home_state import NOTICES_ID, HomeState
from ui.state.learner_state import LearnerState

H = HomeState


def new_session_button() -> rx.Component:
    return rx.button(
        rx.icon("plus"),
        "New session",
        on_click=H.new_session,
        loading=H.creating,
        size=rx.breakpoints(initial="2", sm="3"),
        # while something is due, "Review (N)" beside it is the one primary action
        variant=rx.cond(LearnerState.review.count > 0, "soft", "solid"),
        id="new-session",
    )


def empty_state() -> rx.Component:
    return rx.center(
        rx.vstack(
            rx.icon("network", size=48, color=rx.color("accent", 9)),
            rx.heading("Your knowledge graph starts here", size="6", as_="h2"),
            rx.text(
                "Learn with the tutor; what you show you understand becomes a map of "
                "what you know.",
                size="3",
                color_scheme="gray",
                text_align="center",
            ),
            rx.button(
                rx.icon("sparkles"),
                "Start your first session",
                on_click=H.new_session,
                loading=H.creating,
                size="4",
                id="start-first-session",
            ),
            rx.text(
                "Or learn from your own notes, a chapter or a paper:",
                size="2",
                color_scheme="gray",
            ),
            add_material_button(size="3", variant="outline"),
            align="center",
            spacing="4",
            max_width="32em",
        ),
        height="60vh",
        id="empty-state",
    )


def load_failed_state() -> rx.Component:
    return rx.center(
        rx.vstack(
            rx.icon("cloud-off", size=48, color=rx.color("gray", 9)),
            rx.heading("Your graph could not be loaded", size="5", as_="h2"),
            rx.text(
                "The learning server did not answer; try again in a moment.",
                size="3",
                color_scheme="gray",
                text_align="center",
            ),
            rx.button(rx.icon("refresh-cw"), "Try again", on_click=H.load, size="3"),
            align="center",
            spacing="4",
            max_width="32em",
        ),
        height="60vh",
        id="load-failed",
    )


def header() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.heading("What I know", size=rx.breakpoints(initial="5", sm="6")),
            rx.spacer(),
            review_button(),
            export_menu(),
            new_session_button(),
            rx.color_mode.button(aria_label="Switch light or dark theme"),
            sign_out_button(),
            width="100%",
            align="center",
            wrap="wrap",
        ),
        rx.cond(H.node_total > 0, legend(H.counts)),
        notices(),
        export_error(),
        rx.cond(
            H.error != "",
            rx.callout(H.error, icon="triangle-alert", color_scheme="red", size="1", role="alert"),
        ),
        width="100%",
        spacing="3",
    )


def notices() -> rx.Component:
    """Updating, new things, not reached yet: one polite live region that is always in
    the page (a region added with its text is often not read out)."""
    return rx.box(
        rx.cond(
            H.updating,
            rx.callout("Updating your graph…", icon="refresh-cw", size="1", id="graph-updating"),
            rx.cond(
                H.new_count > 0,
                rx.callout(
                    H.new_note,
                    icon="sparkles",
                    size="1",
                    color_scheme="grass",
                    id="graph-new",
                ),
            ),
        ),
        rx.cond(
            H.late,
            rx.callout.root(
                rx.callout.icon(rx.icon("clock")),
                rx.callout.text(
                    "Your last session has not reached your graph yet. ",
                    rx.button(
                        "Try again",
                        on_click=[H.retry_update, rx.set_focus(NOTICES_ID)],
                        size="1",
                        variant="soft",
                        id="graph-retry",
                    ),
                ),
                size="1",
                color_scheme="amber",
                id="graph-late",
            ),
        ),
        role="status",
        # no gap in the header while there is nothing to say
        margin_top=rx.cond(
            H.updating | (H.new_count > 0) | H.late, "0", "calc(-1 * var(--space-3))"
        ),
        # "Try again" leaves: focus lands on what replaces it, not on the page
        tab_index=-1,
        display="flex",
        flex_direction="column",
        gap="var(--space-3)",
        width="100%",
        id=NOTICES_ID,
    )
