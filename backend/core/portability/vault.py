"""A Markdown vault of the graph (pure): one note per node, one per session, one index,
readable in Obsidian (`[[links]]`, YAML front matter) or any editor.

    Index.md                      every session, and every node by state
    Nodes/<statement>.md          state, memory, evidence quotes, probes, [[links]] along
                                  its edges (requires / required by / supports /
                                  supported by) and to its sessions
    Sessions/<date> <title>.md    the session's nodes, with their states

File names come from statements and titles, made safe: no path separators or characters
Obsidian or Windows refuse (`\\ / : * ? " < > | # ^ [ ]`), no control characters, no
leading dot, no reserved device name, at most 80 characters; unique across the vault
without regard to case (a second "Halves" is "Halves (2)"), so a `[[name]]` link finds
exactly one note wherever it sits. Text from the graph is escaped so it renders as text:
no HTML, no links or headings of its own.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime

from shared_contracts.chat import ChatSummary
from shared_contracts.graph import GraphEdge, GraphNode, GraphSnapshot

INDEX = "Index"
NODES = "Nodes"
SESSIONS = "Sessions"
NAME_LENGTH = 80
STATE_ORDER = ("misconception", "shaky", "fading", "introduced", "verified", "resolved", "unseen")
_UNSAFE = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f\x7f]+')
_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$", re.IGNORECASE)
_MARKDOWN = re.compile(r"([\\\[\]`*_])")
LINKS = (
    ("requires", True, "Requires"),
    ("requires", False, "Required by"),
    ("supports", True, "Supports"),
    ("supports", False, "Supported by"),
)
"""(edge type, whether the node is the edge's `from`, heading): a node note's link lists."""


def safe_name(text: str, fallback: str) -> str:
    """A file name (without `.md`) from `text`: see the module's rules (`fallback` when
    nothing usable is left)."""
    name = unicodedata.normalize("NFC", text)
    name = " ".join(_UNSAFE.sub(" ", name).split()).lstrip(". ").rstrip(". ")
    if len(name) > NAME_LENGTH:
        cut = name[:NAME_LENGTH]
        name = (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(". ")
    if not name:
        name = fallback
    if _RESERVED.match(name):
        name = f"{name} (note)"
    return name


class _Names:
    """Unique note names for the whole vault, compared without regard to case."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def claim(self, wanted: str) -> str:
        name, n = wanted, 1
        while unicodedata.normalize("NFC", name).casefold() in self._taken:
            n += 1
            name = f"{wanted} ({n})"
        self._taken.add(unicodedata.normalize("NFC", name).casefold())
        return name


def text(value: str) -> str:
    """Graph text as Markdown that renders as itself: HTML, link brackets, code and
    emphasis marks escaped, each line's leading `#`, `>`, `-`, `+` or `=` too. `$…$`
    math is left for Obsidian's MathJax."""
    lines = []
    for line in value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").split("\n"):
        line = _MARKDOWN.sub(r"\\\1", line)
        lines.append(re.sub(r"^(\s*)([#\-+=]|\d+\.)", r"\1\\\2", line))
    return "\n".join(lines)


def _quoted(value: str) -> str:
    return "\n".join(f"> {line}" for line in text(value).split("\n"))


def _day(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d") if at else ""


def build_vault(snapshot: GraphSnapshot, chats: Sequence[ChatSummary]) -> dict[str, str]:
    """The vault's files: relative POSIX path → Markdown."""
    names = _Names()
    names.claim(INDEX)
    ordered = sorted(chats, key=lambda c: (c.created_at, c.id))
    session = {
        c.id: names.claim(safe_name(f"{_day(c.created_at)} {c.title}", c.id)) for c in ordered
    }
    for graph_session in snapshot.sessions:  # a folded chat the store no longer lists
        if graph_session.chat_id not in session:
            session[graph_session.chat_id] = names.claim(graph_session.chat_id)
    node = {n.id: names.claim(safe_name(n.statement, n.id)) for n in snapshot.nodes}
    edges: dict[str, list[GraphEdge]] = defaultdict(list)
    for edge in snapshot.edges:
        edges[edge.from_].append(edge)
        edges[edge.to].append(edge)
    by_session: dict[str, list[GraphNode]] = defaultdict(list)
    for n in snapshot.nodes:
        for chat_id in n.sessions:
            by_session[chat_id].append(n)
    files = {f"{INDEX}.md": _index(snapshot.nodes, session, node)}
    for n in snapshot.nodes:
        files[f"{NODES}/{node[n.id]}.md"] = _node_note(n, edges[n.id], node, session)
    titles = {c.id: c for c in ordered}
    for chat_id, name in session.items():
        files[f"{SESSIONS}/{name}.md"] = _session_note(
            chat_id, titles.get(chat_id), by_session[chat_id], node
        )
    return files


def _front_matter(fields: Iterable[tuple[str, object]]) -> list[str]:
    """YAML front matter; every value written as JSON (a subset of YAML: always valid)."""
    lines = ["---"]
    lines += [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields]
    return [*lines, "---", ""]


def _node_note(
    n: GraphNode, edges: list[GraphEdge], node: dict[str, str], session: dict[str, str]
) -> str:
    memory = n.memory
    fields: list[tuple[str, object]] = [
        ("id", n.id),
        ("kind", n.kind),
        ("state", n.state),
        ("correct", n.correct),
        ("incorrect", n.incorrect),
    ]
    if memory is not None:
        fields += [
            ("due", memory.due.isoformat()),
            ("stability_days", round(memory.stability, 2)),
            ("difficulty", round(memory.difficulty, 2)),
            ("reviews", memory.reviews),
        ]
    fields.append(("tags", ["harness", f"state/{n.state}", n.kind]))
    out = _front_matter(fields)
    out += [f"# {text(n.statement)}", ""]
    what = f"**{n.state}**" if n.state == n.kind else f"**{n.state}** {n.kind}"
    summary = f"{what} · {n.correct} right, {n.incorrect} wrong"
    if memory is not None:
        summary += f" · next review {_day(memory.due)}"
    out += [summary, ""]
    if n.evidence:
        # A node's quotes are from the session that created it (its first).
        origin = (
            f" in [[{session[n.sessions[0]]}]]"
            if n.sessions[:1] and n.sessions[0] in session
            else ""
        )
        out += ["## Evidence", ""]
        for quote in n.evidence:
            out += [_quoted(quote.quote), f"> — {quote.speaker}, turn {quote.turn}{origin}", ""]
    for edge_type, outgoing, heading in LINKS:
        linked = [
            (e.to if outgoing else e.from_)
            for e in edges
            if e.type == edge_type and (e.from_ if outgoing else e.to) == n.id
        ]
        if linked:
            out += [f"## {heading}", ""]
            out += [f"- [[{node[other]}]]" for other in linked if other in node]
            out.append("")
    if n.probes:
        out += ["## Probes", ""]
        for probe in n.probes:
            mark = {True: "✓", False: "✗", None: "·"}[probe.correct]
            answered = f" — answered: {text(probe.answer)}" if probe.answer else ""
            out.append(f"- {_day(probe.at)} {mark} {text(probe.question)}{answered}")
        out.append("")
    out += ["## Sessions", ""]
    out += [f"- [[{session[c]}]]" for c in n.sessions if c in session]
    return "\n".join(out) + "\n"


def _session_note(
    chat_id: str, chat: ChatSummary | None, nodes: list[GraphNode], node: dict[str, str]
) -> str:
    fields: list[tuple[str, object]] = [("chat_id", chat_id)]
    if chat is not None:
        fields += [("title", chat.title), ("date", chat.created_at.isoformat())]
    fields.append(("tags", ["harness", "session"]))
    out = _front_matter(fields)
    out += [f"# {text(chat.title) if chat else chat_id}", ""]
    if chat is not None:
        out += [f"{_day(chat.created_at)} · {chat.turns} turns · model {text(chat.model)}", ""]
    if not nodes:
        out.append("Nothing from this session is in the graph yet.")
        return "\n".join(out) + "\n"
    out += ["## What it added to or showed of the graph", ""]
    out += [f"- [[{node[n.id]}]] — {n.state}" for n in nodes]
    return "\n".join(out) + "\n"


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _state_rank(state: str) -> int:
    return STATE_ORDER.index(state) if state in STATE_ORDER else len(STATE_ORDER)


def _index(nodes: Sequence[GraphNode], session: dict[str, str], node: dict[str, str]) -> str:
    out = _front_matter([("tags", ["harness", "index"])])
    out += ["# Learning Harness: your knowledge graph", ""]
    out += [f"{_count(len(nodes), 'node')} from {_count(len(session), 'session')}.", ""]
    out += ["## Sessions", ""]
    out += [f"- [[{name}]]" for name in session.values()]
    out.append("")
    by_state: dict[str, list[GraphNode]] = defaultdict(list)
    for n in nodes:
        by_state[n.state].append(n)
    for state in sorted(by_state, key=_state_rank):
        out += [f"## {state.capitalize()} ({len(by_state[state])})", ""]
        out += [f"- [[{node[n.id]}]]" for n in by_state[state]]
        out.append("")
    return "\n".join(out)
