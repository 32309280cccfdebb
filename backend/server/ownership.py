"""THE ownership seam: every route and the WebSocket reach a learner's services through here.

The edge (`security.auth_guard`) establishes who the learner is; a handler then asks for
that learner's services (`services_of`) or, when it names a chat, job or material, for
them only once the id is proven the learner's (`owned`) — before any store is called.
Another learner's id and an id that does not exist get the very same `NotFound`.
"""

from __future__ import annotations

from typing import Any, cast

from litestar.connection import ASGIConnection

from backend.core.errors import NotFound
from backend.core.ids import require_id
from backend.core.ports import OwnedKind
from backend.server.learners import Learner, Learners
from backend.server.services import Services
from backend.server.stores import LOCAL_LEARNER

Connection = ASGIConnection[Any, Any, Any, Any]

LEARNER_SCOPE_KEY = "harness.learner"
"""Where the guard leaves the signed-in learner's id in the connection's ASGI scope."""


def set_learner(connection: Connection, learner_id: str) -> None:
    cast(dict[str, Any], connection.scope)[LEARNER_SCOPE_KEY] = learner_id


def learner_id_of(connection: Connection) -> str:
    """The learner the guard signed this connection in as (the local learner without accounts)."""
    learner = cast(dict[str, Any], connection.scope).get(LEARNER_SCOPE_KEY)
    return learner if isinstance(learner, str) else LOCAL_LEARNER


async def learner_of(connection: Connection) -> Learner:
    learners: Learners = connection.app.state.learners
    return await learners.get(learner_id_of(connection))


async def services_of(connection: Connection) -> Services:
    """The connection's learner's services (for routes over the learner's whole data: the
    graph, the chat list, the review queue)."""
    return (await learner_of(connection)).services


async def owned(connection: Connection, kind: OwnedKind, raw_id: str) -> tuple[Services, str]:
    """The learner's services and the validated id, once the id is proven the learner's;
    else `InvalidId` or `NotFound` (worded as the stores word a missing one), before any
    store is called."""
    item_id = require_id(raw_id, f"{kind} id")
    learner = await learner_of(connection)
    if learner.owned is not None and not await learner.owned.owns(kind, item_id):
        raise NotFound(f"{kind} {item_id!r} not found")
    return learner.services, item_id
