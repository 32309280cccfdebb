"""Home's graph: the React Flow canvas, its filters and search, the shown count, the note
when only the newest sessions are drawn, and the skip link past the drawn nodes."""

from __future__ import annotations

import reflex as rx

from ui.components.flow import flow_background, flow_controls, flow_minimap, react_flow
from ui.components.hidden import SHOWN_WHEN_FOCUSED
from ui.components.panel import PANEL
from ui.model.graph_view import STATE_STYLE, STATES
from ui.state.home_state import GRAPH_ID, SIDE_PANEL_ID, HomeState

H = HomeState


def filters() -> rx.Component:
    return rx.hstack(
        rx.input(
            rx.input.slot(rx.icon("search", size=14)),
            value=H.search,
            on_change=H.set_search,
            placeholder="Search statements…",
            type="search",
            aria_label="Search the graph by statement",
            id="graph-search",
            size="2",
            width=rx.breakpoints(initial="100%", sm="16em"),
        ),
        rx.text("Show", size="2"),
        rx.select.root(
            rx.select.trigger(aria_label="Filter by state"),
            rx.select.content(
                rx.select.item("all states", value="all"),
                *[rx.select.item(STATE_STYLE[s][0], value=s) for s in STATES],
            ),
            value=H.filter_state,
            on_change=H.set_filter_state,
        ),
        rx.select.root(
            rx.select.trigger(aria_label="Filter by session"),
            rx.select.content(
                rx.select.item("all sessions", value="all"),
                rx.foreach(H.session_options, lambda s: rx.select.item(s.title, value=s.id)),
            ),
            value=H.filter_session,
            on_change=H.set_filter_session,
        ),
        rx.text(
            H.drawn_total,
            " of ",
            H.node_total,
            " shown",
            size="2",
            color_scheme="gray",
            # read out when a filter or search changes what is shown
            role="status",
            id="graph-count",
        ),
        skip_graph(),
        align="center",
        wrap="wrap",
        spacing="2",
    )


def capped_note() -> rx.Component:
    """A months-long graph draws only its newest sessions: say so, and how to see the rest."""
    return rx.cond(
        H.capped_note != "",
        rx.hstack(
            rx.icon("info", size=14, flex_shrink="0"),
            rx.text(H.capped_note, size="1"),
            align="center",
            spacing="1",
            color=rx.color("gray", 11),
            id="graph-capped",
        ),
    )


def no_match() -> rx.Component:
    return rx.center(
        rx.vstack(
            rx.text("Nothing in your graph matches these filters.", size="3"),
            rx.button("Clear filters", on_click=H.clear_filters, variant="soft", size="2"),
            align="center",
            spacing="3",
        ),
        position="absolute",
        inset="0",
        z_index="5",
        id="graph-no-match",
    )


# React Flow's own styles hide which node is selected or focused once a node has a style.
GRAPH_NODE_MARKS = {
    "& .react-flow__node.selected": {"outline": f"3px solid {rx.color('accent', 9)}"},
    "& .lh-session-title .react-flow__handle": {"display": "none"},
    "& .react-flow__node:focus-visible": {
        "outline": f"3px dashed {rx.color('accent', 9)}",
        "outline_offset": "3px",
    },
}


def skip_graph() -> rx.Component:
    """Every drawn node is a tab stop (up to 200): one key press past them to the panel."""
    return rx.button(
        rx.cond(
            H.has_selected,
            "Skip the graph to the node's details",
            "Skip the graph to your sessions",
        ),
        on_click=rx.set_focus(SIDE_PANEL_ID),
        variant="soft",
        size="2",
        id="skip-graph",
        style=SHOWN_WHEN_FOCUSED,
    )


NODE_KEYS_HINT = dict.fromkeys(
    # React Flow's says "Press delete to remove it": the drawing is only a view. It reads
    # the second key while the keyboard is on (the names are the other way round).
    ["node.a11yDescription.default", "node.a11yDescription.keyboardDisabled"],
    "Press Enter or Space to open its details.",
)


def graph_canvas() -> rx.Component:
    return rx.box(
        react_flow(
            flow_background(gap=24),
            flow_controls(show_interactive=False),
            # on a phone the minimap would cover half the graph
            flow_minimap(
                pannable=True,
                zoomable=True,
                display=rx.breakpoints(initial="none", md="block"),
                # a stroke, so nodes drawn without fill (not yet seen) show there too
                custom_attrs={
                    "style": {"width": 140, "height": 96},
                    "nodeStrokeColor": "var(--gray-9)",
                    "nodeStrokeWidth": 3,
                },
            ),
            key=H.flow_key,
            default_nodes=H.nodes,
            default_edges=H.edges,
            fit_view=True,
            fit_view_options=H.fit_options,
            # low enough that the fit-view button fits a whole capped drawing
            min_zoom=0.05,
            max_zoom=2.0,
            nodes_connectable=False,
            # Backspace would wipe a selected node off the drawing (it is only a view)
            delete_key_code=rx.Var("null"),
            aria_label_config=NODE_KEYS_HINT,
            color_mode=rx.color_mode_cond("light", "dark"),
            on_node_click=H.select_node,
            on_selection_change=H.select_node,
            on_key_down=H.select_node,
        ),
        rx.cond(H.shown_total == 0, no_match()),
        position="relative",
        width="100%",
        # a phone's page scrolls, so the canvas has its own height there (flex would zero it)
        height=rx.breakpoints(initial="60vh", md="auto"),
        flex=rx.breakpoints(initial="none", md="1"),
        min_height="360px",
        style=GRAPH_NODE_MARKS,
        **PANEL,
        overflow="hidden",
        role="region",
        aria_label="Your knowledge graph",
        # where focus goes back to when a node's details close
        tab_index=-1,
        id=GRAPH_ID,
    )
