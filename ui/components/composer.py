"""The classroom's composer: the learner's message box with Send, or Stop while the tutor
writes; it gives way (disabled) while a question is open."""

from __future__ import annotations

import reflex as rx

from ui.state.room_state import COMPOSER_ID, DockState, RoomState, StatusState

S = RoomState

COMPOSER_HINT_SIZE = rx.breakpoints(
    {"0px": "var(--font-size-1)", "22.5em": "var(--font-size-2)", "24em": "inherit"}
)


def _wide_only(label: str) -> rx.Component:
    """A button's word, shown from 480 px up: on a phone the button is its icon
    (named by `aria_label`), which leaves the composer room for its whole placeholder."""
    return rx.el.span(label, display=rx.breakpoints(initial="none", xs="inline"))


def composer() -> rx.Component:
    return rx.form(
        rx.hstack(
            rx.input(
                value=S.draft,
                on_change=S.set_draft,
                placeholder="Ask or tell the tutor something…",
                id=COMPOSER_ID,
                aria_label="Message to the tutor",
                name="draft",
                size="3",
                width="100%",
                max_length=16000,
                disabled=DockState.dock.visible,
                # The whole hint fits down to a 320 px phone (smaller below 384 px);
                # narrower still, it ends in "…" rather than mid-word.
                style={
                    "& input": {"text_overflow": "ellipsis"},
                    "& input::placeholder": {"font_size": COMPOSER_HINT_SIZE},
                },
            ),
            rx.cond(
                StatusState.status.turn_running,
                # While the tutor writes, the learner can stop it (the text so far is kept).
                rx.button(
                    rx.icon("square", size=14),
                    _wide_only("Stop"),
                    type="button",
                    on_click=S.stop_turn,
                    size="3",
                    variant="soft",
                    color_scheme="gray",
                    aria_label="Stop",
                    id="stop",
                ),
                rx.button(
                    rx.icon("send", size=16),
                    _wide_only("Send"),
                    type="submit",
                    size="3",
                    aria_label="Send",
                    id="send",
                    disabled=DockState.dock.visible,
                ),
            ),
            width="100%",
        ),
        on_submit=S.send_message,
        reset_on_submit=False,
        width="100%",
    )
