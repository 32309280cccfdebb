"""`/replay/[chat_id]`: a session's trace — timeline on the left, one event's detail right.

For developers; linked from the classroom, not part of the learner's navigation. Every
recorded text is shown inside `<pre>` as text, never rendered as HTML or markdown.
"""

from __future__ import annotations

import reflex as rx

from ui.components.panel import PANEL
from ui.components.plan_panel import plan_panel
from ui.model.replay_parts import Block, Fact
from ui.model.replay_timeline import KindChip, TimelineRow
from ui.state.replay_state import ReplayState

S = ReplayState
D = S.detail

PRE_STYLE = {
    "white_space": "pre-wrap",
    "word_break": "break-word",
    "font_family": "var(--code-font-family, ui-monospace, monospace)",
    "font_size": "13px",
    "line_height": "1.45",
    "max_height": "26em",
    "overflow": "auto",
    "margin": "0",
    "padding": "0.75em",
    "border_radius": "8px",
    "background": rx.color("gray", 2),
    "border": f"1px solid {rx.color('gray', 5)}",
}
KIND_COLOURS = (
    ("turn", "gray"),
    ("prompt", "violet"),
    ("model", "indigo"),
    ("tool", "cyan"),
    ("quiz", "amber"),
    ("job", "teal"),
    ("extraction", "grass"),
    ("inbound", "orange"),
    ("outbound", "sky"),
    ("checkpoint", "brown"),
)


def _kind_badge(kind: rx.Var[str]) -> rx.Component:
    return rx.badge(kind, color_scheme=rx.match(kind, *KIND_COLOURS, "gray"), size="1")


def _pre(text: rx.Var[str] | str, **props) -> rx.Component:
    return rx.el.pre(text, style=PRE_STYLE, tab_index=0, **props)


def _chip(chip: KindChip) -> rx.Component:
    return rx.button(
        chip.label,
        rx.text(chip.count, size="1", opacity="0.8"),
        on_click=S.toggle_kind(chip.key),
        variant=rx.cond(chip.active, "solid", "outline"),
        radius="full",
        size="1",
        aria_pressed=rx.cond(chip.active, "true", "false"),
        class_name="lh-chip",
        data_kind=chip.key,
    )


def filter_chips() -> rx.Component:
    return rx.hstack(
        rx.foreach(S.chips, _chip),
        rx.button("Show all", on_click=S.show_all, variant="ghost", size="1"),
        wrap="wrap",
        spacing="2",
        id="replay-filters",
    )


def _row(row: TimelineRow) -> rx.Component:
    selected = row.seq == S.selected_seq
    return rx.fragment(
        rx.cond(
            row.scope_head,
            rx.text(row.scope, size="1", weight="bold", color_scheme="gray", padding_top="0.5em"),
        ),
        rx.el.button(
            rx.hstack(
                _kind_badge(row.kind),
                rx.vstack(
                    rx.text(row.label, size="2", weight="medium"),
                    rx.cond(row.sub != "", rx.text(row.sub, size="1", color_scheme="gray")),
                    spacing="0",
                    min_width="0",
                ),
                rx.spacer(),
                rx.cond(
                    row.flag == "error",
                    rx.badge(rx.icon("triangle-alert", size=12), "error", color_scheme="red"),
                ),
                rx.text("#", row.seq, size="1", color_scheme="gray"),
                align="center",
                width="100%",
                spacing="2",
            ),
            on_click=S.select(row.seq),
            class_name="lh-replay-row",
            data_kind=row.kind,
            data_seq=row.seq,
            aria_current=rx.cond(selected, "true", "false"),
            style={
                "width": "100%",
                "text_align": "left",
                "padding": "0.35em 0.5em",
                "border": "none",
                "border_radius": "6px",
                "cursor": "pointer",
                "color": "inherit",
                "background": rx.cond(selected, rx.color("accent", 4), "transparent"),
                "_hover": {"background": rx.color("gray", 3)},
            },
        ),
    )


def timeline() -> rx.Component:
    return rx.vstack(
        rx.foreach(S.rows, _row),
        rx.cond(
            S.rows.length() == 0,
            rx.text("No events of the chosen kinds.", size="2", color_scheme="gray"),
        ),
        spacing="0",
        width="100%",
        id="replay-timeline",
    )


def _fact(fact: Fact) -> rx.Component:
    return rx.data_list.item(
        rx.data_list.label(fact.label),
        # Long hashes may break anywhere; words (ledger names) stay whole.
        rx.data_list.value(rx.text(fact.value, style={"overflow_wrap": "anywhere"})),
    )


def _facts(facts: rx.Var[list[Fact]]) -> rx.Component:
    return rx.data_list.root(rx.foreach(facts, _fact), size="1")


def _block(block: Block) -> rx.Component:
    title = rx.text(
        block.title,
        as_="span",  # inline: a folded block's title sits beside its disclosure marker
        size="2",
        weight="bold",
        color=rx.cond(block.error, rx.color("red", 11), "inherit"),
    )
    return rx.cond(
        block.collapsed,
        rx.el.details(
            rx.el.summary(title, style={"cursor": "pointer"}, class_name="lh-replay-summary"),
            _pre(block.text),
            class_name="lh-replay-block",
            width="100%",
        ),
        rx.box(rx.box(title), _pre(block.text), class_name="lh-replay-block", width="100%"),
    )


def prompt_view() -> rx.Component:
    """The system prompt, its graph-context block marked (colour, border and a caption)."""
    return rx.box(
        rx.hstack(
            rx.text(D.prompt_title, size="2", weight="bold"),
            rx.cond(
                D.prompt_context != "",
                # A long prompt hides the block far down its scroll box: jump to it.
                rx.button(
                    rx.icon("arrow-down", size=14),
                    "graph context (highlighted)",
                    on_click=rx.scroll_to("graph-context"),
                    color_scheme="amber",
                    variant="outline",
                    size="1",
                    id="jump-to-graph-context",
                ),
                rx.badge("no graph context", color_scheme="gray", variant="outline"),
            ),
            align="center",
        ),
        rx.el.pre(
            rx.el.span(D.prompt_before),
            rx.cond(
                D.prompt_context != "",
                rx.el.mark(
                    rx.el.span(
                        "▼ graph context",
                        style={"font_weight": "bold", "display": "block", "font_size": "11px"},
                    ),
                    D.prompt_context,
                    id="graph-context",
                    style={
                        "display": "block",
                        "background": rx.color("amber", 3),
                        "color": "inherit",
                        "border_left": f"4px solid {rx.color('amber', 9)}",
                        "padding": "0.25em 0.5em",
                    },
                ),
            ),
            rx.el.span(D.prompt_after),
            style={**PRE_STYLE, "max_height": "32em"},
            tab_index=0,
            id="replay-prompt",
        ),
        width="100%",
    )


def state_view() -> rx.Component:
    return rx.vstack(
        rx.heading("State as of this event", size="3"),
        rx.hstack(
            rx.box(
                plan_panel(D.plan_goal, D.plan),
                rx.text(D.plan_note, size="1", color_scheme="gray"),
                flex="1",
                min_width="240px",
            ),
            rx.box(
                rx.heading("Graph", size="3"),
                rx.cond(
                    D.graph.length() > 0,
                    _facts(D.graph),
                    rx.text("No graph hash recorded yet.", size="2", color_scheme="gray"),
                ),
                flex="1",
                min_width="240px",
            ),
            wrap="wrap",
            spacing="4",
            width="100%",
            align="start",
        ),
        padding="1em",
        **PANEL,
        width="100%",
        id="replay-state",
    )


def detail_panel() -> rx.Component:
    return rx.cond(
        S.has_detail,
        rx.vstack(
            rx.hstack(
                _kind_badge(D.kind),
                rx.heading(D.title, size="4", id="replay-detail-title"),
                rx.text("#", D.seq, " · ", D.scope, size="2", color_scheme="gray"),
                align="center",
                wrap="wrap",
            ),
            _facts(D.facts),
            rx.cond(D.has_prompt, prompt_view()),
            rx.foreach(D.blocks, _block),
            state_view(),
            spacing="3",
            width="100%",
            id="replay-detail",
        ),
        rx.center(
            rx.text("Select an event in the timeline to see its detail.", color_scheme="gray"),
            height="30vh",
        ),
    )


def problem_view() -> rx.Component:
    return rx.center(
        rx.vstack(
            rx.icon("file-search", size=40, color=rx.color("gray", 9)),
            rx.text(S.problem, size="4", text_align="center"),
            rx.link("Back to my graph", href="/"),
            align="center",
            spacing="3",
        ),
        height="50vh",
        id="replay-problem",
    )


def header() -> rx.Component:
    return rx.hstack(
        rx.cond(
            S.exists,
            rx.link(
                rx.hstack(rx.icon("arrow-left", size=16), rx.text("Session")),
                href="/chat/" + S.chat_id,
            ),
            rx.link(rx.hstack(rx.icon("arrow-left", size=16), rx.text("My graph")), href="/"),
        ),
        rx.heading("Replay", size="5"),
        rx.text(S.title, " ", rx.code(S.chat_id), size="2", color_scheme="gray"),
        rx.spacer(),
        rx.cond(S.total > 0, rx.text(S.total, " events", size="2", color_scheme="gray")),
        rx.color_mode.button(),
        width="100%",
        align="center",
        spacing="3",
        padding_y="0.5em",
        wrap="wrap",
    )


def replay() -> rx.Component:
    body = rx.vstack(
        filter_chips(),
        rx.flex(
            rx.box(
                timeline(),
                width=rx.breakpoints(initial="100%", md="400px"),
                flex_shrink="0",
                # Side by side, the timeline stays in view while a long detail scrolls.
                position=rx.breakpoints(initial="static", md="sticky"),
                top="1em",
                max_height=rx.breakpoints(initial="50vh", md="calc(100vh - 6em)"),
                id="replay-timeline-box",
                overflow_y="auto",
                padding="0.5em",
                **PANEL,
            ),
            rx.box(detail_panel(), flex="1", min_width="0", width="100%"),
            direction=rx.breakpoints(initial="column", md="row"),
            gap="1.5em",
            width="100%",
            align="start",
        ),
        spacing="3",
        width="100%",
    )
    return rx.container(
        header(),
        rx.cond(
            S.loading,
            rx.center(rx.spinner(size="3"), height="40vh"),
            rx.cond(S.problem != "", problem_view(), body),
        ),
        size="4",
        padding_x="1em",
        padding_bottom="3em",
    )
