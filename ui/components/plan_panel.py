"""The plan tree: the teacher's map of this session, done nodes checked, current highlighted,
"to revisit" and "check first" nodes marked with an icon and a word."""

from __future__ import annotations

import reflex as rx

from ui.model.plan_view import PlanRow

MARKS = {
    # mark: (Lucide icon, colour, what a screen reader hears for the icon)
    "done": ("circle-check", rx.color("grass", 10), "done"),
    "current": ("circle-dot", rx.color("accent", 10), "now"),
    "revisit": ("rotate-ccw", rx.color("amber", 10), "to revisit"),
    "skipped": ("skip-forward", rx.color("gray", 10), "moved past"),
    "check": ("shield-question", rx.color("cyan", 10), "check first"),
}
TAG_SCHEMES = {"to revisit": "amber", "check first": "cyan"}


def _icon(mark: str) -> rx.Component:
    name, colour, label = MARKS[mark]
    return rx.icon(name, color=colour, size=18, aria_label=label, flex_shrink="0")


def _row(row: PlanRow) -> rx.Component:
    return rx.hstack(
        rx.match(
            row.mark,
            *((mark, _icon(mark)) for mark in MARKS),
            rx.icon("circle", color=rx.color("gray", 8), size=18, aria_label="to do"),
        ),
        rx.vstack(
            rx.text(
                row.title,
                rx.cond(
                    row.tag != "",
                    rx.badge(
                        row.tag,
                        color_scheme=rx.match(row.tag, *TAG_SCHEMES.items(), "gray"),
                        variant="outline",
                        size="1",
                        margin_left="0.5em",
                    ),
                ),
                weight=rx.cond(row.current, "bold", "regular"),
                size="2",
            ),
            rx.cond(row.summary != "", rx.text(row.summary, size="1", color_scheme="gray")),
            rx.cond(row.note != "", rx.text(row.note, size="1", color=rx.color("gray", 11))),
            rx.cond(row.sources != "", rx.text(row.sources, size="1", color=rx.color("gray", 11))),
            spacing="0",
        ),
        padding_left=row.indent,
        padding_y="0.25em",
        background=rx.cond(row.current, rx.color("accent", 3), "transparent"),
        border_radius="6px",
        width="100%",
        align="start",
        class_name="lh-plan-row lh-plan-" + row.mark,
        data_status=row.status,
        role="listitem",
        aria_current=rx.cond(row.current, "step", "false"),
    )


def plan_panel(goal: rx.Var[str], rows: rx.Var[list[PlanRow]]) -> rx.Component:
    return rx.vstack(
        rx.heading("Plan", size="3", as_="h2"),
        rx.cond(
            rows.length() > 0,
            rx.vstack(
                rx.text(goal, size="2", color_scheme="gray"),
                rx.vstack(
                    rx.foreach(rows, _row), spacing="1", width="100%", role="list", id="plan-rows"
                ),
                spacing="1",
                width="100%",
            ),
            rx.text("The tutor's plan appears here as it is made.", size="2", color_scheme="gray"),
        ),
        spacing="2",
        width="100%",
        id="plan-tree",
    )
