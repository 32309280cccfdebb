"""The side panel's list of sessions, newest first (the latest few until "Show all")."""

from __future__ import annotations

import reflex as rx

from ui.model.home_view import ChatRow
from ui.state.home_state import HomeState

H = HomeState


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
