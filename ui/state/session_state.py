"""Signing in (`LH_AUTH=accounts`): the sign-up and sign-in forms, signing out, and the
page guard that sends a tab with no signed-in learner to `/signin`.

The API token lives in `ui.settings.SIGNED_IN`, keyed by the tab's Reflex client token —
never in a state var; the browser sees only the username."""

from __future__ import annotations

from typing import Any

import reflex as rx

from ui import api
from ui.settings import SIGNED_IN, tab_token

PROBLEMS = {
    0: "The API cannot be reached; try again in a moment.",
    400: "",  # the API's own sentence says what is wrong with the name or password
    401: "Unknown username or wrong password.",
    409: "That username is taken; choose another.",
    429: "Too many attempts; wait a minute and try again.",
}


def problem(error: api.ApiError) -> str:
    """A sentence for the learner (the API's detail for a refused name or password)."""
    known = PROBLEMS.get(error.status)
    if known:
        return known
    return str(error).partition(": ")[2] or str(error)


def _form_text(form: dict[str, Any], name: str) -> str:
    value = form.get(name, "")
    return value if isinstance(value, str) else ""


class SessionState(rx.State):
    """Who is signed in on this tab, and the forms' progress."""

    username: str = ""
    problem: str = ""
    busy: bool = False
    accounts: bool = False

    @rx.event
    async def require_sign_in(self) -> Any:
        """on_load of every page: with accounts, a tab that is not signed in goes to /signin."""
        try:
            self.accounts = (await api.health()).auth == "accounts"
        except api.ApiError:
            return None  # the page's own load reports the unreachable API
        if self.accounts and not SIGNED_IN.get(tab_token() or ""):
            self.username = ""
            return rx.redirect("/signin")
        return None

    async def _open_session(self, username: str, password: str) -> bool:
        """Sign in; on success the tab's token is kept (not in state) and True returned."""
        try:
            session = await api.sign_in(username, password)
        except api.ApiError as exc:
            self.busy, self.problem = False, problem(exc)
            return False
        tab = tab_token()
        if tab:
            SIGNED_IN[tab] = session.token
        self.busy, self.username = False, session.username
        return True

    @rx.event
    async def sign_in(self, form: dict[str, Any]) -> Any:
        self.busy, self.problem = True, ""
        yield
        if await self._open_session(_form_text(form, "username"), _form_text(form, "password")):
            yield rx.redirect("/")

    @rx.event
    async def sign_up(self, form: dict[str, Any]) -> Any:
        username, password = _form_text(form, "username"), _form_text(form, "password")
        if password != _form_text(form, "confirm"):
            self.problem = "The two passwords differ."
            return
        self.busy, self.problem = True, ""
        yield
        try:
            await api.sign_up(username, password)
        except api.ApiError as exc:
            self.busy, self.problem = False, problem(exc)
            return
        if await self._open_session(username, password):
            yield rx.redirect("/")

    @rx.event
    async def sign_out(self) -> Any:
        try:
            await api.sign_out()
        except api.ApiError:
            pass  # the token is forgotten here either way; it expires on its own
        SIGNED_IN.pop(tab_token() or "", None)
        self.username = ""
        return rx.redirect("/signin")
