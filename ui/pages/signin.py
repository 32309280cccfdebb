"""`/signin` and `/signup` (`LH_AUTH=accounts`): plain forms, labelled fields, one problem
line read out by screen readers; no JavaScript of ours."""

from __future__ import annotations

import reflex as rx

from ui.state.session_state import SessionState

S = SessionState


def _field(label: str, name: str, kind: str, autocomplete: str) -> rx.Component:
    return rx.el.label(
        rx.text(label, size="2", weight="medium"),
        rx.input(
            name=name,
            id=name,
            type=kind,
            required=True,
            auto_complete=autocomplete,
            size="3",
            width="100%",
        ),
        display="flex",
        flex_direction="column",
        gap="0.3em",
        width="100%",
    )


def _card(title: str, form: rx.Component, other: rx.Component) -> rx.Component:
    return rx.center(
        rx.card(
            rx.vstack(
                rx.heading(title, size="6", as_="h1"),
                form,
                rx.cond(
                    S.problem != "",
                    rx.callout(S.problem, icon="triangle_alert", color_scheme="red", role="alert"),
                ),
                other,
                spacing="4",
                width="100%",
            ),
            width="min(26em, 94vw)",
            padding="1.5em",
        ),
        min_height="80vh",
    )


def signin() -> rx.Component:
    form = rx.form(
        rx.vstack(
            _field("Username", "username", "text", "username"),
            _field("Password", "password", "password", "current-password"),
            rx.button("Sign in", type="submit", loading=S.busy, size="3", width="100%"),
            spacing="3",
            width="100%",
        ),
        on_submit=S.sign_in,
        id="signin-form",
        width="100%",
    )
    other = rx.text("New here? ", rx.link("Create an account", href="/signup"), size="2")
    return _card("Sign in", form, other)


def signup() -> rx.Component:
    form = rx.form(
        rx.vstack(
            _field("Username", "username", "text", "username"),
            rx.text("3 to 32 letters, digits, _ or -", size="1", color_scheme="gray"),
            _field("Password", "password", "password", "new-password"),
            _field("Password again", "confirm", "password", "new-password"),
            rx.text("At least 8 characters", size="1", color_scheme="gray"),
            rx.button("Create account", type="submit", loading=S.busy, size="3", width="100%"),
            spacing="3",
            width="100%",
        ),
        on_submit=S.sign_up,
        id="signup-form",
        width="100%",
    )
    other = rx.text("Have an account? ", rx.link("Sign in", href="/signin"), size="2")
    return _card("Create your account", form, other)
