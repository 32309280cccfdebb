"""The classroom's header: back to the graph, the session's title (marked "Review" in a
review session), the plan toggle, Add material, End session and the theme switch."""

from __future__ import annotations

import reflex as rx

from ui.components.materials_dialog import add_material_button
from ui.state.room_state import RoomState, StatusState

S = RoomState
WORD_ON_WIDE_SCREENS = {
    prop: rx.breakpoints(initial=hidden, sm=shown)
    for prop, hidden, shown in (
        ("position", "absolute", "static"),
        ("width", "1px", "auto"),
        ("height", "1px", "auto"),
        ("overflow", "hidden", "visible"),
        ("clip_path", "inset(50%)", "none"),
    )
}
"""Visually hidden below Radix's `sm` breakpoint (as `hidden.VISUALLY_HIDDEN`), shown above."""


def _review_mark() -> rx.Component:
    """Icon and word (never colour alone); high contrast: soft Radix text on its fill falls
    under 4.5:1 in some schemes. At phone width only the icon shows (the word pushed the
    theme switch off the screen); a screen reader still reads the word."""
    return rx.badge(
        rx.icon("rotate-ccw", size=14),
        rx.text("Review", as_="span", style=WORD_ON_WIDE_SCREENS),
        title="A review session: the tutor asks about what is due for review",
        high_contrast=True,
        size=rx.breakpoints(initial="1", sm="2"),
        flex_shrink="0",
        id="review-session",
    )


def header() -> rx.Component:
    return rx.hstack(
        rx.link(
            # On a phone the arrow alone (its words still read out): with Add material the
            # row pushed the theme switch off a 390 px screen and left the title no room.
            rx.hstack(
                rx.icon("arrow-left", size=16),
                rx.text("My graph", as_="span", style=WORD_ON_WIDE_SCREENS),
                white_space="nowrap",
            ),
            href="/",
            on_click=S.leave,
        ),
        # The title and the review mark share one flex item (one gap, not two: at phone
        # width every pixel counts). A long title is cut with an ellipsis: a flex item
        # shrinks only from min-width 0. Not trimmed: with `overflow: hidden` a trimmed
        # line box cut off g, j, p, q and y.
        rx.hstack(
            rx.heading(
                rx.cond(StatusState.status.title != "", StatusState.status.title, "Session"),
                size="4",
                flex="1",
                min_width="0",
                white_space="nowrap",
                overflow="hidden",
                text_overflow="ellipsis",
                id="room-title",
            ),
            rx.cond(StatusState.status.review, _review_mark()),
            flex="1",
            min_width="0",
            align="center",
            spacing="1",
        ),
        rx.icon_button(
            rx.icon("list-tree"),
            on_click=S.toggle_plan,
            variant="soft",
            aria_label="Plan",
            aria_expanded=S.plan_open,
            aria_controls="plan-tree",
            title="Show or hide the plan",
            id="plan-toggle",
        ),
        add_material_button(size="2", variant="outline", word_style=WORD_ON_WIDE_SCREENS),
        rx.button(
            "End session",
            on_click=S.end_session,
            loading=StatusState.status.extracting,
            color_scheme="gray",
            variant="outline",
            id="end-session",
        ),
        rx.color_mode.button(aria_label="Switch light or dark theme"),
        width="100%",
        align="center",
        spacing="3",
        padding_y="0.5em",
    )
