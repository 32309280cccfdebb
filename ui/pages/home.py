"""`/`: the learner's knowledge graph, its legend, filters, node panel and sessions."""

from __future__ import annotations

import reflex as rx
from reflex.components.el.elements.sectioning import Aside
from reflex.event import key_event

from ui.components.flow import flow_background, flow_controls, flow_minimap, react_flow
from ui.components.hidden import SHOWN_WHEN_FOCUSED
from ui.components.legend import legend
from ui.components.panel import PANEL
from ui.components.safe_markdown import safe_markdown
from ui.graph_view import STATE_STYLE, STATES, ProbeRow, Quote
from ui.state.home_state import GRAPH_ID, NOTICES_ID, SIDE_PANEL_ID, ChatRow, HomeState
from ui.state.room_state import RoomState

H = HomeState


class SidePanel(Aside):
    """The aside beside the graph, reporting keys (Escape closes a node's details)."""

    on_key_down: rx.EventHandler[key_event]


def new_session_button() -> rx.Component:
    return rx.button(
        rx.icon("plus"),
        "New session",
        on_click=H.new_session,
        loading=H.creating,
        size=rx.breakpoints(initial="2", sm="3"),
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


def node_panel() -> rx.Component:
    d = H.selected
    return rx.vstack(
        rx.hstack(
            rx.badge(
                d.icon,
                " ",
                d.state_label,
                color_scheme=rx.match(
                    d.state,
                    ("verified", "grass"),
                    ("shaky", "amber"),
                    ("misconception", "red"),
                    "gray",
                ),
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
        ),
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
        rx.button(
            rx.cond(d.learn, rx.icon("book-open"), rx.icon("dumbbell")),
            d.action,
            on_click=H.practise,
            loading=H.creating,
            size="2",
            id="practise-this",
        ),
        rx.heading("Evidence", size="2", as_="h3"),
        rx.cond(
            d.quotes.length() > 0,
            rx.vstack(
                rx.foreach(d.quotes, _quote),
                spacing="2",
            ),
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
        spacing="3",
        width="100%",
        id="node-panel",
    )


def _chat_row(row: ChatRow) -> rx.Component:
    return rx.link(
        rx.box(
            rx.text(row.title, weight="medium", size="3"),
            rx.text(row.when, " · ", row.turns, size="1", color_scheme="gray"),
            padding="0.5em",
            border_radius="8px",
            _hover={"background": rx.color("gray", 3)},
        ),
        href=row.href,
        underline="none",
        color="inherit",
    )


def sessions_panel() -> rx.Component:
    return rx.vstack(
        rx.heading("Sessions", size="3", as_="h2"),
        rx.cond(
            H.chats.length() > 0,
            rx.vstack(
                rx.cond(
                    H.show_all_chats,
                    rx.foreach(H.chats, _chat_row),
                    rx.foreach(H.recent_chats, _chat_row),
                ),
                rx.cond(
                    H.chats.length() > H.recent_chats.length(),
                    rx.button(
                        rx.cond(
                            H.show_all_chats,
                            "Show only the latest",
                            "Show all " + H.chats.length().to_string() + " sessions",
                        ),
                        on_click=H.toggle_all_chats,
                        variant="ghost",
                        size="2",
                        id="chat-list-toggle",
                    ),
                ),
                spacing="1",
                width="100%",
                id="chat-list",
            ),
            rx.text(
                rx.cond(H.load_failed, "Sessions could not be loaded.", "No sessions yet."),
                size="2",
                color_scheme="gray",
            ),
        ),
        spacing="2",
        width="100%",
    )


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


def header() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.heading("What I know", size=rx.breakpoints(initial="5", sm="6")),
            rx.spacer(),
            new_session_button(),
            rx.color_mode.button(aria_label="Switch light or dark theme"),
            width="100%",
            align="center",
        ),
        rx.cond(H.node_total > 0, legend(H.counts)),
        notices(),
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


@rx.page(route="/", title="Learning Harness", on_load=[RoomState.leave, HomeState.load])
def home() -> rx.Component:
    body = rx.cond(
        H.node_total == 0,
        rx.cond(
            H.loading | H.updating,
            rx.center(rx.spinner(size="3"), height="40vh"),
            rx.cond(H.load_failed, load_failed_state(), empty_state()),
        ),
        rx.vstack(
            filters(),
            capped_note(),
            graph_canvas(),
            width="100%",
            height="100%",
            spacing="2",
        ),
    )
    # From md up the page is one screen: the graph takes whatever the header leaves.
    return rx.el.main(
        header(),
        rx.flex(
            rx.box(body, flex="1", min_width="0"),
            SidePanel.create(
                rx.cond(H.has_selected, node_panel(), sessions_panel()),
                aria_label=rx.cond(H.has_selected, "The node's details", "Your sessions"),
                tab_index=-1,
                on_key_down=H.panel_key,
                id=SIDE_PANEL_ID,
                width=rx.breakpoints(initial="100%", md="340px"),
                flex_shrink="0",
                padding="1em",
                **PANEL,
                overflow_y="auto",
            ),
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
