"""The state legend with counts: colour plus icon plus word, never colour alone."""

from __future__ import annotations

import reflex as rx

from ui.model.graph_view import StateCount


def state_badge(count: StateCount) -> rx.Component:
    return rx.hstack(
        rx.box(
            rx.text(
                count.icon,
                weight="bold",
                size="2",
                color=rx.cond(count.outline, "var(--gray-12)", "white"),
            ),
            # an outlined state is a dashed ring with no fill, as its nodes are drawn
            background=rx.cond(count.outline, "transparent", count.colour),
            border=rx.cond(count.outline, "2px dashed " + count.colour, "none"),
            border_radius="999px",
            width="1.5em",
            height="1.5em",
            display="flex",
            align_items="center",
            justify_content="center",
        ),
        rx.text(count.label, size="2"),
        rx.badge(count.count, variant="soft", color_scheme="gray"),
        spacing="2",
        align="center",
    )


def legend(counts: rx.Var[list[StateCount]]) -> rx.Component:
    return rx.hstack(
        rx.foreach(counts, state_badge),
        rx.hstack(
            rx.text("→ needed for", size="2"),
            rx.text("- - supports", size="2", color_scheme="gray"),
            spacing="3",
        ),
        wrap="wrap",
        spacing="4",
        align="center",
        # a name on a plain div is not read out: a group's is
        role="group",
        aria_label="Legend",
    )
