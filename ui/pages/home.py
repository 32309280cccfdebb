"""`/`: the learner's knowledge graph, its legend, filters, node panel and sessions."""

from __future__ import annotations

import reflex as rx
from reflex.components.el.elements.sectioning import Aside
from reflex.event import key_event

from ui.components.graph_canvas import capped_note, filters, graph_canvas
from ui.components.home_header import empty_state, header, load_failed_state
from ui.components.materials_dialog import materials_dialog
from ui.components.node_panel import node_panel
from ui.components.panel import PANEL
from ui.components.review_panel import review_panel
from ui.components.sessions_panel import sessions_panel
from ui.components.time_travel import moment_banner, moment_select
from ui.state.home_state import SIDE_PANEL_ID, HomeState
from ui.state.learner_state import LearnerState

H = HomeState


class SidePanel(Aside):
    """The aside beside the graph, reporting keys (Escape closes a node's details)."""

    on_key_down: rx.EventHandler[key_event]


def side_panel() -> rx.Component:
    return SidePanel.create(
        rx.cond(
            H.has_selected,
            node_panel(),
            rx.vstack(
                rx.cond((H.node_total > 0) & LearnerState.review_offered, review_panel()),
                sessions_panel(),
                spacing="4",
                width="100%",
            ),
        ),
        aria_label=rx.cond(H.has_selected, "The node's details", "Your review and sessions"),
        tab_index=-1,
        on_key_down=H.panel_key,
        id=SIDE_PANEL_ID,
        width=rx.breakpoints(initial="100%", md="340px"),
        flex_shrink="0",
        padding="1em",
        **PANEL,
        overflow_y="auto",
    )


def graph_or_welcome() -> rx.Component:
    """The graph with its moment and filters; before there is one, a spinner, the first-session
    invitation or the load failure."""
    return rx.cond(
        H.node_total == 0,
        rx.cond(
            H.loading | H.updating,
            rx.center(rx.spinner(size="3"), height="40vh"),
            rx.cond(H.load_failed, load_failed_state(), empty_state()),
        ),
        rx.vstack(
            rx.hstack(moment_select(), filters(), wrap="wrap", spacing="4", align="center"),
            moment_banner(),
            capped_note(),
            graph_canvas(),
            width="100%",
            height="100%",
            spacing="2",
        ),
    )


def home() -> rx.Component:
    # From md up the page is one screen: the graph takes whatever the header leaves.
    return rx.el.main(
        header(),
        materials_dialog(),
        rx.flex(
            rx.box(graph_or_welcome(), flex="1", min_width="0"),
            side_panel(),
            direction=rx.breakpoints(initial="column", md="row"),
            gap="1.5em",
            width="100%",
            flex="1",
            min_height="0",
        ),
        display="flex",
        flex_direction="column",
        gap="1em",
        height=rx.breakpoints(initial="auto", md="100vh"),
        max_width="1168px",
        margin_x="auto",
        padding="1em",
    )
