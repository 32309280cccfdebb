"""The learner model on home: "Review (N)" beside "New session" (the primary action while
something is due), and above the sessions list the queue's top reasons, or a kind word that
nothing is due, and the calibration line."""

from __future__ import annotations

import reflex as rx

from ui.model.learner_view import ReasonView
from ui.state.learner_state import LearnerState

L = LearnerState
REASON_ICONS = {
    "confidently_wrong": "triangle-alert",
    "misconception_open": "circle-x",
    "prerequisite_at_risk": "link",
}
"""A Lucide icon per queue reason, beside its sentence (never the only signal); `due` and
anything else: a clock."""


def review_button() -> rx.Component:
    """Shown only while something is due (then "New session" steps back to secondary)."""
    return rx.cond(
        L.review.count > 0,
        rx.button(
            rx.icon("rotate-ccw"),
            L.review.label,
            on_click=L.start_review,
            loading=L.starting,
            size=rx.breakpoints(initial="2", sm="3"),
            id="start-review",
        ),
    )


def _icon(name: str) -> rx.Component:
    return rx.icon(name, size=16, flex_shrink="0", margin_top="0.2em")


def _reason(reason: ReasonView) -> rx.Component:
    return rx.el.li(
        rx.hstack(
            rx.match(
                reason.reason,
                *((r, _icon(name)) for r, name in REASON_ICONS.items()),
                _icon("clock"),
            ),
            rx.box(
                rx.text(reason.statement, weight="medium", size="2"),
                rx.text(reason.detail, size="2", color=rx.color("gray", 11)),
            ),
            spacing="2",
            align="start",
        ),
        list_style="none",
    )


def _queue() -> rx.Component:
    return rx.cond(
        L.review_failed != "",
        rx.text(L.review_failed, size="2", color_scheme="red", id="review-failed"),
        rx.cond(
            L.review.count > 0,
            rx.vstack(
                rx.el.ul(
                    rx.foreach(L.review.reasons, _reason),
                    display="flex",
                    flex_direction="column",
                    gap="var(--space-2)",
                    margin="0",
                    padding="0",
                ),
                rx.cond(
                    L.review.more != "",
                    rx.text(L.review.more, size="1", color_scheme="gray"),
                ),
                spacing="1",
                width="100%",
                id="review-reasons",
            ),
            rx.text(L.review.empty_note, size="2", color_scheme="gray", id="review-empty"),
        ),
    )


def review_panel() -> rx.Component:
    """Above the sessions: what is due and why, and how well confidence matched answers."""
    return rx.vstack(
        rx.heading("Review", size="3", as_="h2"),
        rx.cond(L.review_loaded, _queue(), rx.spinner(size="2")),
        rx.cond(
            L.calibration != "",
            rx.hstack(
                rx.icon("gauge", size=16, flex_shrink="0", margin_top="0.2em"),
                rx.text(L.calibration, size="2"),
                spacing="2",
                align="start",
                id="calibration",
            ),
        ),
        rx.cond(
            L.error != "",
            rx.text(L.error, size="2", color_scheme="red", role="alert"),
        ),
        spacing="2",
        width="100%",
        padding_bottom="1em",
        border_bottom=f"1px solid {rx.color('gray', 5)}",
        id="review-panel",
    )
