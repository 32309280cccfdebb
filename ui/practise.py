""" "Practise this" (or "Learn this" for what no session taught yet): the chat title, the
first learner message and the classroom URL for it.

The home page creates the chat and opens `/chat/<id>?ask=<message>`; the classroom sends
that message once, as soon as its first snapshot shows an empty, idle chat.
"""

from __future__ import annotations

from urllib.parse import quote

from ui.model.graph_view import clip as shorten
from ui.model.room import Room

TITLE_PREFIX = "Practise: "
LEARN_TITLE_PREFIX = "Learn: "
TITLE_CHARS = 60
ASK_PREFIX = "Help me practise: "
LEARN_ASK_PREFIX = "Help me learn: "
ASK_CHARS = 1000
"""An `?ask=` message longer than this is cut (it travels in the URL)."""


def practise_title(statement: str, learn: bool = False) -> str:
    """ "Practise: <statement, shortened>" ("Learn: …" when `learn`), always within the API's
    200-character title."""
    return (LEARN_TITLE_PREFIX if learn else TITLE_PREFIX) + shorten(statement, TITLE_CHARS)


def practise_ask(statement: str, learn: bool = False) -> str:
    """The learner's first message: "Help me practise: <statement>" ("Help me learn: …")."""
    prefix = LEARN_ASK_PREFIX if learn else ASK_PREFIX
    return prefix + shorten(statement, ASK_CHARS - len(prefix))


def practise_href(chat_id: str, statement: str, learn: bool = False) -> str:
    """`/chat/<id>?ask=<the first message, URL-encoded>`."""
    return f"/chat/{chat_id}?ask={quote(practise_ask(statement, learn), safe='')}"


def clean_ask(value: str) -> str:
    """An `?ask=` value made safe to send: one line-ish, bounded, "" when blank."""
    return value.strip()[:ASK_CHARS]


def ready_to_ask(room: Room) -> bool:
    """True when a queued `?ask=` may be sent: connected, loaded, idle, and nothing said yet.

    "Nothing said yet" makes it once: after a reload the chat already holds the message."""
    return (
        room.loaded
        and room.connection == "connected"
        and not room.messages
        and not room.turn_running
        and room.pending is None
    )
