"""Per-process mailboxes from UI event handlers to the task that owns a classroom socket.

The socket itself lives only inside its background task; handlers that need to send a
frame put the encoded bytes into that task's queue, found by (client token, chat id).
"""

from __future__ import annotations

import asyncio

_QUEUES: dict[str, asyncio.Queue[bytes]] = {}


def key(client_token: str, chat_id: str) -> str:
    return f"{client_token}:{chat_id}"


def open_box(box: str) -> asyncio.Queue[bytes]:
    """A fresh queue for `box`, replacing any older task's queue."""
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    _QUEUES[box] = queue
    return queue


def close_box(box: str, queue: asyncio.Queue[bytes]) -> None:
    """Forgets `box` if it still belongs to `queue` (a newer task may have replaced it)."""
    if _QUEUES.get(box) is queue:
        del _QUEUES[box]


def post(box: str, frame: bytes) -> bool:
    """Queues one encoded client frame; False when no task holds a socket for `box`."""
    queue = _QUEUES.get(box)
    if queue is None:
        return False
    queue.put_nowait(frame)
    return True
