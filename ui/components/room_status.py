"""The classroom's status: the status line (connection, tutor, extraction, replay link),
the reconnecting notice and the error alert by the composer."""

from __future__ import annotations

import reflex as rx

from ui.state.room_state import RoomState, StatusState

S = RoomState
Status = StatusState.status


def status_line() -> rx.Component:
    return rx.hstack(
        rx.badge(
            rx.cond(
                Status.connection == "connected",
                rx.icon("wifi", size=14),
                rx.icon("wifi-off", size=14),
            ),
            Status.connection_label,
            color_scheme=rx.match(
                Status.connection, ("connected", "grass"), ("reconnecting", "amber"), "gray"
            ),
            id="connection-status",
        ),
        rx.cond(
            Status.tutor_label != "",
            rx.badge(
                rx.icon("graduation-cap", size=14),
                Status.tutor_label,
                variant="outline",
                id="tutor-label",
            ),
        ),
        rx.cond(
            Status.turn_running,
            rx.hstack(rx.spinner(size="1"), rx.text("tutor is writing…", size="1")),
        ),
        rx.cond(
            Status.extracting,
            rx.hstack(
                rx.spinner(size="1"), rx.text("updating your graph…", size="1"), id="extracting"
            ),
        ),
        rx.cond(
            Status.graph_notice != "",
            rx.link(Status.graph_notice, href="/", id="graph-notice", size="2"),
        ),
        rx.spacer(),
        rx.cond(
            S.room_id != "",
            rx.link(
                rx.hstack(
                    rx.icon("history", size=12), rx.text("Replay"), spacing="1", align="center"
                ),
                href="/replay/" + S.room_id,
                size="1",
                color_scheme="gray",
                title="Developer replay of this session",
                id="replay-link",
            ),
        ),
        spacing="3",
        align="center",
        wrap="wrap",
        width="100%",
    )


def connection_notice() -> rx.Component:
    """While the socket is down, said where the learner is looking (the status line is at
    the top of a conversation that may be long)."""
    return rx.cond(
        Status.connection == "reconnecting",
        rx.callout(
            "Reconnecting to the server… Nothing is lost: the page catches up once it is back.",
            icon="wifi-off",
            color_scheme="amber",
            size="1",
            role="status",
            id="connection-notice",
        ),
    )


def error_alert() -> rx.Component:
    return rx.cond(
        Status.error != "",
        rx.callout.root(
            rx.callout.icon(rx.icon("triangle-alert")),
            # The callout is a two-column grid (icon, text): the dismiss button shares the
            # text's cell, at its end, instead of wrapping onto a row of its own.
            rx.hstack(
                rx.callout.text(Status.error, flex="1"),
                rx.icon_button(
                    rx.icon("x", size=14),
                    on_click=S.dismiss_error,
                    variant="ghost",
                    size="1",
                    aria_label="Dismiss",
                ),
                align="start",
                width="100%",
            ),
            color_scheme="red",
            size="1",
            role="alert",
            id="room-error",
        ),
    )
