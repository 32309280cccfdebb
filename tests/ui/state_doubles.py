"""Reflex states outside a running app: a fresh substate, and a stand-in for the proxy a
background handler holds (`async with self:`)."""

from __future__ import annotations

import reflex as rx


def substate(cls):
    """A fresh instance of the state class `cls`, under a new root state."""
    return rx.State().get_substate(cls.get_full_name().split(".")[1:])


class FakeProxy:
    """Stands in for reflex's StateProxy in background handlers."""

    def __init__(self, state):
        object.__setattr__(self, "_s", state)

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return None

    def __getattr__(self, name):
        return getattr(self._s, name)

    def __setattr__(self, name, value):
        setattr(self._s, name, value)


def part(state, cls):
    """The classroom part `cls` (a substate of `RoomState`) of the room state `state`."""
    return state.get_substate([cls.get_name()])
