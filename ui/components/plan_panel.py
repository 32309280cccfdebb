"""The plan tree: the teacher's map of this session, done nodes checked, current highlighted."""

from __future__ import annotations

import reflex as rx

from ui.model.render import PlanRow


def _row(row: PlanRow) -> rx.Component:
    return rx.hstack(
        rx.cond(
            row.done,
            rx.icon("circle-check", color=rx.color("grass", 10), size=18, aria_label="done"),
            rx.cond(
                row.current,
                rx.icon("circle-dot", color=rx.color("accent", 10), size=18, aria_label="now"),
                rx.icon("circle", color=rx.color("gray", 8), size=18, aria_label="to do"),
            ),
        ),
        rx.vstack(
            rx.text(row.title, weight=rx.cond(row.current, "bold", "regular"), size="2"),
            rx.cond(row.summary != "", rx.text(row.summary, size="1", color_scheme="gray")),
            spacing="0",
        ),
        padding_left=row.indent,
        padding_y="0.25em",
        background=rx.cond(row.current, rx.color("accent", 3), "transparent"),
        border_radius="6px",
        width="100%",
        align="start",
        class_name=rx.cond(row.done, "lh-plan-row lh-plan-done", "lh-plan-row"),
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
