"""A unit's `Scope` refers to its task weakly: a finished unit's task, context and scope
are freed by reference counting (no cycle left for a full collection), and a scope whose
task is gone is nobody's, even for a later task given the same id."""

from __future__ import annotations

import asyncio
import gc
import weakref

import anyio
import anyio.lowlevel

from backend.tracing.units import SCOPE_VAR, Scope, current_scope


async def test_a_finished_units_task_is_freed_without_a_collection():
    made: list[weakref.ref] = []

    async def unit() -> None:
        scope = Scope.here("chat-1", "turn:1")
        SCOPE_VAR.set(scope)
        assert current_scope() is scope
        made.append(weakref.ref(scope))
        made.append(weakref.ref(asyncio.current_task()))  # type: ignore[arg-type]

    gc.disable()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(unit)
        await anyio.lowlevel.checkpoint()
        assert [ref() for ref in made] == [None, None]
    finally:
        gc.enable()


async def test_a_scope_whose_task_is_gone_is_nobodys():
    scopes: list[Scope] = []

    async def unit() -> None:
        scopes.append(Scope.here("chat-1", "turn:1"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(unit)
    (scope,) = scopes
    gc.collect()
    assert scope.owner is not None and scope.owner() is None
    assert not scope.owns(scope.task)  # a new task at the old address is not the unit
    here = Scope.here("chat-1", "turn:2")
    assert here.owns(here.task) and not here.owns(scope.task + 1)
