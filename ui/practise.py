""" "Practise this" ("Learn this" for what no session taught yet, "Review this" for what is
fading): the chat title, the first learner message and the classroom URL for it.

The home page creates the chat and opens `/chat/<id>?ask=<message>`; the classroom sends
that message once, as soon as its first snapshot shows an empty, idle chat.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import quote

from ui.model.graph_view import clip as shorten
from ui.model.room import Room

Aim = Literal["practise", "learn", "review"]
"""What the chat is for: practise a node, learn one no session taught yet ("not yet seen"),
or review one whose recall is fading."""
AIMS: dict[str, Aim] = {"practise": "practise", "learn": "learn", "review": "review"}


def as_aim(value: str) -> Aim:
    """A view's aim (a plain string in Reflex state) as an Aim; anything else practises."""
    return AIMS.get(value, "practise")


TITLE_PREFIXES = {"practise": "Practise: ", "learn": "Learn: ", "review": "Review: "}
TITLE_CHARS = 60
ASK_PREFIXES = {
    "practise": "Help me practise: ",
    "learn": "Help me learn: ",
    "review": "Help me review: ",
}
ASK_CHARS = 1000
"""An `?ask=` message longer than this is cut (it travels in the URL)."""
REVIEW_ASK = "Let's review what is due."
"""The first message of a review session (a chat in `review` mode) started from home."""


def practise_title(statement: str, aim: Aim = "practise") -> str:
    """ "Practise: <statement, shortened>" ("Learn: …", "Review: …"), always within the
    API's 200-character title."""
    return TITLE_PREFIXES[aim] + shorten(statement, TITLE_CHARS)


def practise_ask(statement: str, aim: Aim = "practise") -> str:
    """The learner's first message: "Help me practise: <statement>" ("Help me learn: …")."""
    prefix = ASK_PREFIXES[aim]
    return prefix + shorten(statement, ASK_CHARS - len(prefix))


def ask_href(chat_id: str, message: str) -> str:
    """`/chat/<id>?ask=<message, URL-encoded>`: the classroom sends it once."""
    return f"/chat/{chat_id}?ask={quote(message, safe='')}"


def practise_href(chat_id: str, statement: str, aim: Aim = "practise") -> str:
    """`/chat/<id>?ask=<the first message, URL-encoded>`."""
    return ask_href(chat_id, practise_ask(statement, aim))


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
