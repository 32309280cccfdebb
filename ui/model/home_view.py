"""Home's plain views: the sessions list, the new-things note, search, and what the canvas
says when it draws only part of what matches."""

from __future__ import annotations

import dataclasses

from shared_contracts.chat import ChatSummary
from shared_contracts.graph import GraphNode, GraphSnapshot


@dataclasses.dataclass
class ChatRow:
    id: str = ""
    title: str = ""
    when: str = ""
    turns: str = ""
    """How long the session was: "1 turn", "12 turns"."""
    href: str = ""


def chat_rows(chats: list[ChatSummary]) -> list[ChatRow]:
    """Sessions newest first, as list rows."""
    ordered = sorted(chats, key=lambda c: c.updated_at, reverse=True)
    return [
        ChatRow(
            id=c.id,
            title=c.title or "Untitled session",
            when=c.updated_at.strftime("%Y-%m-%d %H:%M"),
            turns=f"{c.turns} turn" if c.turns == 1 else f"{c.turns} turns",
            href=f"/chat/{c.id}",
        )
        for c in ordered
    ]


def new_note(count: int) -> str:
    """How many things the last session added, in words ("" for none)."""
    if count <= 0:
        return ""
    if count == 1:
        return "1 thing from your last session is highlighted."
    return f"{count} things from your last session are highlighted."


def has_session(snapshot: GraphSnapshot, chat_id: str) -> bool:
    """True once the graph holds anything folded from `chat_id`."""
    return any(s.chat_id == chat_id for s in snapshot.sessions) or any(
        chat_id in n.sessions for n in snapshot.nodes
    )


def search_nodes(nodes: list[GraphNode], query: str) -> list[GraphNode]:
    """Nodes whose statement contains `query` (case-insensitive; blank = all)."""
    needle = " ".join(query.split()).casefold()
    if not needle:
        return list(nodes)
    return [n for n in nodes if needle in " ".join(n.statement.split()).casefold()]


def capped_note(matches: int, drawn: int, blocks: int, filtered: bool) -> str:
    """What the canvas says when it draws only `drawn` of `matches` nodes (in `blocks`
    session blocks): which ones, and how to see the others. "" when it draws them all."""
    if drawn >= matches:
        return ""
    newest = "your newest session" if blocks == 1 else f"your {blocks} newest sessions"
    if filtered:
        return (
            f"{matches:,} match; drawn are those from {newest}. "
            "Narrow the search or pick a session to see the others."
        )
    return f"Drawn: {newest}. Search or pick a session to see the others."
