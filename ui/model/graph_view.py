"""The knowledge graph for the learner: node states and their legend, filters, and the
side panel's detail of one node (its layout on the canvas is `graph_layout`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from shared_contracts.graph import Evidence, GraphNode, GraphSnapshot
from ui.model.mathdelims import normalise_math
from ui.model.memory_view import MemoryLine, ResolvedView, memory_lines, resolved_view

STATES = ("verified", "fading", "introduced", "shaky", "misconception", "resolved", "unseen")
"""Legend and filter order: what the learner has shown first, what nobody checked last."""
STATE_STYLE = {
    # state: (label, icon, fill, border, text)
    "verified": ("verified", "✓", "#d3f9d8", "#2f9e44", "#0b3d17"),
    # known once, recall now below the desired retention: due for review
    "fading": ("fading", "◔", "#f3f0ff", "#7048e8", "#2b1a66"),
    "introduced": ("introduced", "○", "#e7ecf2", "#64748b", "#1e293b"),
    "shaky": ("shaky", "!", "#fff3bf", "#f08c00", "#4a3000"),
    "misconception": ("misconception", "✗", "#ffe3e3", "#e03131", "#5c0a0a"),
    # a misconception the learner rejected in a later session (dashed, as every misconception)
    "resolved": ("resolved", "☑", "#c3fae8", "#0c8599", "#063c40"),
    # outline only: no fill, so theme colours keep the text readable in light and dark mode
    "unseen": ("not yet seen", "?", "transparent", "var(--gray-9)", "var(--gray-12)"),
}
BADGE_SCHEMES = {
    "verified": "grass",
    "fading": "violet",
    "shaky": "amber",
    "misconception": "red",
    "resolved": "teal",
}
"""The Radix colour scheme of a state's badge in the node panel (others gray)."""
OUTLINED = frozenset({"unseen"})
"""States drawn as an outline: a dashed border, no fill."""
UNSEEN_NOTE = (
    "Not yet seen: a session you took rests on this, but no session has taught or checked it yet."
)
SPEAKERS = {"learner": "You said", "answer": "Your answer", "teacher": "The teacher said"}
"""Who an evidence quote is from, as the side panel names them."""


@dataclasses.dataclass
class StateCount:
    state: str = ""
    label: str = ""
    icon: str = ""
    colour: str = ""
    outline: bool = False
    """Drawn as a dashed ring with no fill, like the node itself."""
    count: int = 0


@dataclasses.dataclass
class SessionLink:
    id: str = ""
    title: str = ""
    """The chat's title, or its id when the chat list does not know it."""


@dataclasses.dataclass
class ProbeRow:
    question: str = ""
    answer: str = ""
    verdict: str = ""
    when: str = ""
    session: str = ""
    session_title: str = ""


@dataclasses.dataclass
class Quote:
    text: str = ""
    who: str = ""
    """"You said", "Your answer", "The teacher said" or "From your material, page 3"."""


def who_said(evidence: Evidence) -> str:
    """Whose words a quote is; a passage of the learner's document names its page."""
    if evidence.speaker == "material":
        page = evidence.page if isinstance(evidence.page, int) else None
        return "From your material" + (f", page {page}" if page is not None else "")
    return SPEAKERS[evidence.speaker]


@dataclasses.dataclass
class NodeDetail:
    id: str = ""
    statement: str = ""
    kind: str = ""
    state: str = ""
    state_label: str = ""
    icon: str = ""
    colour: str = ""
    sessions: list[SessionLink] = dataclasses.field(default_factory=list)
    note: str = ""
    """Why the node is in the graph, when its state alone does not say (not yet seen)."""
    quotes: list[Quote] = dataclasses.field(default_factory=list)
    probes: list[ProbeRow] = dataclasses.field(default_factory=list)
    no_probes: str = ""
    """What the probe history says when it is empty (a misconception is seen, not quizzed)."""
    aim: str = "practise"
    """The panel's action: "learn" what no session taught, "review" what is fading, else
    "practise"."""
    action: str = ""
    """The action's label: "Learn this", "Review this" or "Practise this"."""
    memory: list[MemoryLine] = dataclasses.field(default_factory=list)
    """Its memory in words (chance of getting it right, due, last checked)."""
    resolved: ResolvedView = dataclasses.field(default_factory=ResolvedView)
    has_resolution: bool = False
    """A misconception cleared up: `resolved` says when and by which question."""


def filtered(snapshot: GraphSnapshot, state: str, session: str) -> list[GraphNode]:
    """Nodes matching a state ("" = all) and a session ("" = all)."""
    return [
        n
        for n in snapshot.nodes
        if (not state or n.state == state) and (not session or session in n.sessions)
    ]


def clip(text: str, limit: int) -> str:
    """`text` on one line, cut at a word with "…" when longer than `limit`."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:.") + "…"


def counts(snapshot: GraphSnapshot) -> list[StateCount]:
    """Nodes per derived state, in legend order (every state, zeros included)."""
    tally = dict.fromkeys(STATES, 0)
    for node in snapshot.nodes:
        tally[node.state] = tally.get(node.state, 0) + 1
    return [
        StateCount(
            state=s,
            label=STATE_STYLE[s][0],
            icon=STATE_STYLE[s][1],
            colour=STATE_STYLE[s][3],
            outline=s in OUTLINED,
            count=tally[s],
        )
        for s in STATES
    ]


def sessions(snapshot: GraphSnapshot) -> list[str]:
    """Every chat id that contributed a node, first seen first."""
    seen: dict[str, None] = {}
    for session in snapshot.sessions:
        seen.setdefault(session.chat_id, None)
    for node in snapshot.nodes:
        for chat_id in node.sessions:
            seen.setdefault(chat_id, None)
    return list(seen)


def when(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M") if at else ""


def verdict_label(correct: bool | None) -> str:
    if correct is None:
        return "answered"
    return "✓ right" if correct else "✗ wrong"


def session_links(chat_ids: Sequence[str], titles: Mapping[str, str]) -> list[SessionLink]:
    """Chat ids as the learner knows them: by title."""
    return [SessionLink(id=c, title=titles.get(c) or c) for c in chat_ids]


ACTIONS = {"learn": "Learn this", "review": "Review this", "practise": "Practise this"}


def aim_of(state: str) -> str:
    """What the panel's action does for a node in `state`."""
    return {"unseen": "learn", "fading": "review"}.get(state, "practise")


def detail(
    snapshot: GraphSnapshot,
    node_id: str,
    titles: Mapping[str, str] | None = None,
    now: datetime | None = None,
) -> NodeDetail | None:
    """The side panel for one node: statement, state, memory, evidence and probe history.

    `titles` names sessions (chat id → title); a quote recorded twice shows once. Memory is
    told as of the snapshot's moment (`now`, else the clock, for a snapshot of none)."""
    titles = titles or {}
    moment = snapshot.as_of or now or datetime.now(UTC)
    node = next((n for n in snapshot.nodes if n.id == node_id), None)
    if node is None:
        return None
    label, icon, _, border, _ = STATE_STYLE[node.state]
    unseen = node.state == "unseen"
    quotes: dict[str, Quote] = {}
    for evidence in node.evidence:
        text = normalise_math(evidence.quote)
        quotes.setdefault(text, Quote(text, who_said(evidence)))
    if node.kind == "misconception":
        no_probes = "Seen in the answer quoted above; questions check the idea it gets wrong."
    elif unseen:
        no_probes = "No questions yet: learn it first, then a question can check it."
    else:
        no_probes = "Not checked by a question yet."
    return NodeDetail(
        id=node.id,
        statement=normalise_math(node.statement),
        kind=node.kind,
        state=node.state,
        state_label=label,
        icon=icon,
        colour=border,
        sessions=session_links(node.sessions, titles),
        note=UNSEEN_NOTE if unseen else "",
        quotes=list(quotes.values()),
        probes=[
            ProbeRow(
                question=normalise_math(p.question),
                answer=normalise_math(p.answer),
                verdict=verdict_label(p.correct),
                when=when(p.at),
                session=p.chat_id,
                session_title=titles.get(p.chat_id) or p.chat_id,
            )
            for p in sorted(node.probes, key=lambda p: p.at, reverse=True)
        ],
        no_probes=no_probes,
        aim=aim_of(node.state),
        action=ACTIONS[aim_of(node.state)],
        memory=memory_lines(node.memory, moment, node.state),
        resolved=resolved_view(node.resolution, titles),
        has_resolution=node.resolution is not None,
    )
