"""The signed-in learner's name and a sign-out button (`LH_AUTH=accounts`; empty otherwise)."""

from __future__ import annotations

import reflex as rx

from ui.state.session_state import SessionState

S = SessionState


def sign_out_button() -> rx.Component:
    """Shown only to a signed-in learner (accounts): their name and a sign-out button."""
    return rx.cond(
        S.username != "",
        rx.hstack(
            rx.text(S.username, size="2", color_scheme="gray"),
            rx.button("Sign out", on_click=S.sign_out, variant="ghost", size="2", id="sign-out"),
            align="center",
            spacing="2",
        ),
    )
