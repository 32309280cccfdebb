"""Feeding a replay: the recorded learner frames and session-end requests, each when its
recorded turn comes, and the watch that ends a replay once it has settled."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence

import anyio

from backend.replay.cassette import Cassette
from backend.server.dispatch import receive
from backend.server.hub import Connection
from backend.server.services import Services
from backend.tracing.units import is_session_end
from shared_contracts.trace import InboundFrameEvent

TICK_S = 0.01


async def feed(
    services: Services,
    cassette: Cassette,
    chat_id: str,
    inbound: Sequence[InboundFrameEvent],
    stall_s: float,
) -> None:
    """The recorded learner frames, each socket's (unit's) on its own, as on their sockets:
    a frame of one socket may be recorded between another's frame and what that frame
    then reads (an answer, its question), so no socket waits for another's frame to be
    handled. Older traces have one `learner` unit: their frames go one after another."""
    units: dict[str, list[InboundFrameEvent]] = {}
    for event in inbound:
        units.setdefault(event.scope, []).append(event)
    async with anyio.create_task_group() as tg:
        for unit, frames in units.items():
            tg.start_soon(
                _feed_unit, services, cassette, Connection(chat_id), unit, frames, stall_s
            )


async def _feed_unit(
    services: Services,
    cassette: Cassette,
    connection: Connection,
    unit: str,
    frames: Sequence[InboundFrameEvent],
    stall_s: float,
) -> None:
    """One unit's recorded frames, each once its recorded turn comes."""
    # The unit's sync points are its frames and what they read: a frame waits for its
    # own ordinal among them.
    ordinal = {seq: n for n, seq in enumerate(cassette.sync_seqs.get(unit, []))}
    for event in frames:
        gate = cassette.gate(unit, ordinal[event.seq])
        if not await _wait(cassette, gate, stall_s):
            return
        cut = cassette.aborts.get(event.seq)
        # An abort lands where it landed when recorded: once the call it cut has yielded
        # what it had yielded then.
        if cut is not None and not await _wait(cassette, cassette.reached(cut), stall_s):
            return
        if is_session_end(unit):
            # The session-end flush, an HTTP request: re-issued as the route issues it.
            await services.end_session(connection.chat_id, unit)
        else:
            await receive(services, connection, event.frame, unit)


async def _wait(cassette: Cassette, waiter: Awaitable[None], stall_s: float) -> bool:
    """Await `waiter` unless the replay diverged or stalled first; True if it completed."""
    done = False

    async def run() -> None:
        nonlocal done
        await waiter
        done = True
        tg.cancel_scope.cancel()

    async def watch() -> None:
        await cassette.failed.wait()
        tg.cancel_scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        tg.start_soon(watch)
        await anyio.sleep(stall_s)
        tg.cancel_scope.cancel()
    return done


async def settle(
    services: Services, cassette: Cassette, chat_id: str, expected: int, stall_s: float
) -> None:
    """Until every recorded sync point has passed, the replay has emitted `expected` events
    and then nothing new for a few ticks (a fork: until nothing runs); or until it stalls
    (nothing emitted for `stall_s`) or diverges. Units held at a sync point their recording
    never reached count as finished."""
    quiet = 0
    idle_for = 0.0
    last = -1
    while quiet < 3 and idle_for < stall_s:
        if cassette.failed.is_set():
            await anyio.sleep(0.05)  # let the diverged turn finish and record its end
            return
        count = services.tracer.emitted(chat_id)
        done = _done(services, cassette, chat_id, count, expected)
        if count != last:
            last, quiet, idle_for = count, 0, 0.0
        elif done:
            quiet += 1
        else:
            idle_for += TICK_S
        with anyio.move_on_after(TICK_S):
            await cassette.changed.wait()


def _done(services: Services, cassette: Cassette, chat_id: str, count: int, expected: int) -> bool:
    """Whether the replay has done what it will do (see `settle`)."""
    if cassette.shutdown is not None:
        # It shuts down as the recording did: once every unit is where it was cut.
        return cassette.ready()
    done = count >= expected if expected else services.idle(chat_id)
    # A recording that ends inside a turn: that turn is held where it ends.
    return (done or cassette.at_end()) and not cassette.remaining()


async def release_when_stalled(cassette: Cassette, stall_s: float) -> None:
    """After the replay's shutdown: if its units have not all ended within `stall_s` (one
    waits at a sync point the recording's order never gives it), release them."""
    with anyio.move_on_after(stall_s):
        await cassette.failed.wait()
        await anyio.sleep(0.05)  # let the diverged unit finish and record its end
    cassette.close()
