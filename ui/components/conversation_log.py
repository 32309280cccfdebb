"""The classroom's conversation: earlier turns and the latest one, as a polite live log."""

from __future__ import annotations

import reflex as rx

from ui.components.chat_items import chat_item, text_block
from ui.state.room_state import (
    FOLLOW_ID,
    ChatLogState,
    LiveState,
    RoomState,
    StatusState,
    TurnState,
)

S = RoomState
Log = ChatLogState
Turn = TurnState
Live = LiveState.live


def conversation_log() -> rx.Component:
    shown = Log.items.length() + Turn.turn_items.length() + rx.cond(Live.text != "", 1, 0)
    return rx.vstack(
        rx.cond(
            shown == 0,
            rx.text("Say hello, or tell the tutor what you want to learn.", color_scheme="gray"),
        ),
        # A long chat opens at its latest page; the rest comes a page at a time.
        rx.cond(
            Log.earlier.count > 0,
            rx.button(
                rx.icon("chevrons-up", size=16),
                Log.earlier.label,
                on_click=S.show_earlier,
                loading=Log.earlier.loading,
                variant="soft",
                color_scheme="gray",
                id="show-earlier",
                align_self="center",
            ),
        ),
        # Earlier turns and the latest one read different states: a streamed token
        # redraws the latest turn only.
        rx.foreach(Log.items, chat_item),
        rx.foreach(Turn.turn_items, chat_item),
        rx.cond(Live.text != "", text_block(role=Live.role, text=Live.text)),
        # A chat opens at its latest message: this mounts with the first items.
        rx.cond(shown > 0, rx.box(display="none", on_mount=rx.scroll_to(FOLLOW_ID))),
        spacing="3",
        width="100%",
        id="conversation",
        # A log is read out as it grows; busy while the tutor writes, so a screen
        # reader reads the finished answer once instead of every streamed token.
        role="log",
        aria_live="polite",
        aria_label="Conversation",
        aria_busy=StatusState.status.turn_running,
    )
