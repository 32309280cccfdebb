"""Study cards from the graph: what an Anki deck of a learner's propositions holds (pure).

One card per node:
- a proposition the learner was asked about: the question that last probed it on the
  front; its expected answer, the statement and an evidence quote on the back;
- a proposition never asked about: a cloze of its statement (its longest word that is no
  common word, hidden);
- a misconception: "which is true?" between the answer the learner gave and the expected
  one, when the quiz that showed it can be found (an incorrect probe of one of its sessions
  whose question and answer its evidence quotes); otherwise "true or false?" of the belief.
Tags: `harness`, `session::<chat id>` for each session that showed the node, and
`state::<state>`. A node with memory is a review card due when its memory says; one
without is a new card.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from shared_contracts.graph import EventLine, GraphNode, GraphSnapshot

CardStyle = Literal["question", "cloze", "which_is_true", "true_or_false"]

_COMMON = """
    a an the and or but of to in on at by for with from into onto than then that this
    these those is are was were be been being it its as not no so if when what which who
    whom whose how why where there here their they them he she his her we our you your i
    can could may might must will would shall should do does did has have had about
    after before between each every more most other some such only same very just also
    one two first
"""
COMMON_WORDS = frozenset(_COMMON.split())
_WORD = re.compile(r"[^\W_][\w'’-]*[^\W_]|[^\W_]", re.UNICODE)
_OPTION_LABEL = re.compile(r"^\s*[A-Za-z0-9][).:]\s+")


NO_CLOZE = ("", "", "")


@dataclass(frozen=True, slots=True)
class Schedule:
    """Where the node's memory puts its card: a review due on `due`."""

    due: datetime
    interval_days: int
    stability: float
    difficulty: float
    reviews: int


@dataclass(frozen=True, slots=True)
class StudyCard:
    node_id: str
    style: CardStyle
    prompt: str
    """The question (question, which_is_true), the belief (true_or_false) or the whole
    statement (cloze)."""
    answer: str
    """The expected answer, the true option, or "False" for a belief."""
    statement: str
    evidence: str
    """One verbatim quote of the learner's (or the first the node has); may be empty."""
    tags: tuple[str, ...]
    options: tuple[str, ...] = ()
    cloze: tuple[str, str, str] = NO_CLOZE
    """(before, hidden term, after) for a cloze card."""
    schedule: Schedule | None = None


def study_cards(snapshot: GraphSnapshot, events: Iterable[EventLine]) -> list[StudyCard]:
    """A card for every node of `snapshot` (in its order); `events` are the ledger's, used
    to find the quiz that showed a misconception."""
    wrong: dict[str, list[EventLine]] = defaultdict(list)
    for event in events:
        if event.kind == "quiz_incorrect" and event.question:
            wrong[event.chat_id].append(event)
    return [_card(node, wrong) for node in snapshot.nodes]


def _card(node: GraphNode, wrong: dict[str, list[EventLine]]) -> StudyCard:
    cloze = StudyCard(
        node_id=node.id,
        style="cloze",
        prompt=node.statement,
        answer="",
        statement=node.statement,
        evidence=_evidence(node),
        tags=_tags(node),
        cloze=cloze_of(node.statement),
        schedule=_schedule(node),
    )
    if node.kind == "misconception":
        shown = _showing_probe(node, wrong)
        if shown is None:
            return replace(cloze, style="true_or_false", answer="False", cloze=NO_CLOZE)
        right, given = plain_option(shown.expected), plain_option(shown.answer)
        return replace(
            cloze,
            style="which_is_true",
            prompt=shown.question,
            answer=right,
            options=tuple(sorted({right, given}, key=str.casefold)),
            cloze=NO_CLOZE,
        )
    asked = [p for p in node.probes if p.question]
    if asked:
        last = asked[-1]
        return replace(
            cloze, style="question", prompt=last.question, answer=last.expected, cloze=NO_CLOZE
        )
    return cloze


def plain_option(text: str) -> str:
    """An option's words without a leading label ("b) Oxygen" → "Oxygen")."""
    return _OPTION_LABEL.sub("", text, count=1).strip() or text


def cloze_of(statement: str) -> tuple[str, str, str]:
    """The statement split around the word to hide: its longest word that is not a common
    one (the first of equals); the whole statement when it has no such word."""
    best: re.Match[str] | None = None
    for match in _WORD.finditer(statement):
        word = match.group()
        if word.casefold() in COMMON_WORDS or word.isdigit():
            continue
        if best is None or len(word) > len(best.group()):
            best = match
    if best is None:
        return "", statement, ""
    return statement[: best.start()], best.group(), statement[best.end() :]


def _showing_probe(node: GraphNode, wrong: dict[str, list[EventLine]]) -> EventLine | None:
    """The incorrect probe of one of the node's sessions that its evidence quotes (its
    question and the learner's answer in one quote), the latest if several do."""
    found = None
    for chat_id in node.sessions:
        for event in wrong.get(chat_id, ()):
            quoted = any(
                event.question in e.quote and event.answer in e.quote for e in node.evidence
            )
            if event.answer and quoted and (found is None or event.at >= found.at):
                found = event
    return found


def _evidence(node: GraphNode) -> str:
    mine = [e.quote for e in node.evidence if e.speaker != "teacher"]
    return (mine or [e.quote for e in node.evidence] or [""])[0]


def _tags(node: GraphNode) -> tuple[str, ...]:
    return ("harness", *(f"session::{chat}" for chat in node.sessions), f"state::{node.state}")


def _schedule(node: GraphNode) -> Schedule | None:
    memory = node.memory
    if memory is None:
        return None
    interval = max(1, (memory.due - memory.last_review).days)
    return Schedule(
        due=memory.due,
        interval_days=interval,
        stability=memory.stability,
        difficulty=memory.difficulty,
        reviews=memory.reviews,
    )
