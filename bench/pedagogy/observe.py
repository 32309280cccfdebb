"""What the harness believes about each concept, read from a `GET /api/graph` answer.

A proposition node is a concept's when its statement is the offline extractor's statement
of that lesson node ("title: summary") or one of its probes asked the concept's question.
A misconception node is a concept's when its statement states the concept's named belief
(as the offline extractor does: "thinks " + the lesson library's belief) or quotes the
concept's question (as it did before: `thinks “X” is the answer to: PROMPT`); its belief is
the named misconception whose name or statement it carries, or whose specific wrong answer
it quotes — else it is unnamed (None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bench.pedagogy.world import MATCH, Concept, World, norm, similarity

QUOTED = re.compile(r"“(.*?)”")
OPEN = "misconception"


@dataclass
class ConceptView:
    """The harness's view of one concept at one moment."""

    state: str = "absent"
    """The proposition node's derived state, or "absent" when it has none."""
    node_id: str | None = None
    memory: dict[str, Any] | None = None
    misconceptions: list[tuple[str, str, str | None]] = field(default_factory=list)
    """(node id, state, belief name or None) of each misconception node on the concept."""

    def open_beliefs(self) -> list[str | None]:
        return [belief for _, state, belief in self.misconceptions if state == OPEN]

    @property
    def verdict(self) -> str:
        """What the harness claims: "misconception" (an open one), "verified", or the
        proposition's other state."""
        return OPEN if self.open_beliefs() else self.state


def read_graph(graph: dict[str, Any], world: World, concepts: list[str]) -> dict[str, ConceptView]:
    """concept id → the harness's view, for each of `concepts`."""
    views = {c: ConceptView() for c in concepts}
    wanted = [world.concepts[c] for c in concepts]
    for node in graph.get("nodes", []):
        if node.get("kind") == "misconception":
            concept = _misconception_concept(node, wanted)
            if concept is not None:
                belief = belief_of(node, concept)
                views[concept.id].misconceptions.append((node["id"], node["state"], belief))
            continue
        concept = _proposition_concept(node, wanted)
        if concept is None:
            continue
        view = views[concept.id]
        if view.node_id is None or len(node.get("probes", [])) > _probes_of(graph, view.node_id):
            view.state, view.node_id = str(node["state"]), str(node["id"])
            view.memory = node.get("memory")
    return views


def _probes_of(graph: dict[str, Any], node_id: str) -> int:
    node: dict[str, Any] = next((n for n in graph.get("nodes", []) if n.get("id") == node_id), {})
    return len(node.get("probes", []))


def _proposition_concept(node: dict[str, Any], concepts: list[Concept]) -> Concept | None:
    statement = norm(str(node.get("statement", "")))
    questions = {norm(str(p.get("question", ""))) for p in node.get("probes", [])}
    for concept in concepts:
        if statement == norm(concept.statement) or norm(concept.prompt) in questions:
            return concept
    return None


def _misconception_concept(node: dict[str, Any], concepts: list[Concept]) -> Concept | None:
    statement = str(node.get("statement", ""))
    for concept in concepts:
        if norm(concept.prompt) in norm(statement):
            return concept
    for concept in concepts:
        m = concept.misconception
        if m is not None and (m.name in statement or similarity(statement, m.statement) >= MATCH):
            return concept
    return None


def belief_of(node: dict[str, Any], concept: Concept) -> str | None:
    """The named misconception a misconception node states, or None (unnamed)."""
    m = concept.misconception
    if m is None:
        return None
    statement = str(node.get("statement", ""))
    if m.name in statement or similarity(statement, m.statement) >= MATCH:
        return m.name
    quoted = QUOTED.search(statement)
    if quoted and norm(quoted.group(1)) == norm(concept.words(m.answer)):
        return m.name
    return None
