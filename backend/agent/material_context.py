"""The teacher's block about the learner's own material, appended to its instructions like
the graph context: the attached document's outline (quoted as data), what to do with it,
and the learner's other documents it may search.

The attached document's tag (`<material id=... attached="yes">`) is also how the offline
tutor, which reads only its request, knows which document to teach; document text inside
the block is defused (`untrusted.defuse`), so no document can forge that tag.
"""

from __future__ import annotations

import re

from backend.agent.untrusted import DATA_RULE, defuse
from shared_contracts.materials import Material, MaterialText

OUTLINE_LINES = 40
OTHERS_LISTED = 20
_ATTACHED = re.compile(r'^<material id="([a-z0-9][a-z0-9_-]{0,63})"[^>\n]* attached="yes"', re.M)

ATTACHED_RULES = (
    "This session teaches from the material above: the learner chose it. Teach what it "
    "says, in its order, unless the learner asks for a part of it. Before you teach a part, "
    "call `search_material` to read its passages. In `plan_init` and `plan_add`, give each "
    "node `passages`: the page and the exact words (5 to 40 of them) that the node teaches; "
    "each is checked against the document and dropped if it is not found word for word. "
    "Quote the document only from passages you were given."
)
SEARCH_RULES = (
    "The learner has uploaded documents of their own. When a question may be answered by "
    "them, call `search_material` and teach from the passages it returns, naming the page."
)


def render_material_context(
    attached: tuple[Material, MaterialText] | None, others: list[Material]
) -> str:
    """The block ("" when the learner has no material at all)."""
    if attached is None and not others:
        return ""
    parts: list[str] = []
    if attached is not None:
        material, text = attached
        parts += [_tag(material, text), ATTACHED_RULES]
    else:
        parts.append(SEARCH_RULES)
    listed = [m for m in others if attached is None or m.id != attached[0].id][:OTHERS_LISTED]
    if listed:
        names = "; ".join(f"“{_attribute(m.title)}” ({m.id}, {m.pages} p.)" for m in listed)
        parts.append(f"Other documents of the learner that `search_material` searches: {names}.")
    parts.append(DATA_RULE)
    return "\n\n".join(parts)


def attached_material_id(system_prompt: str) -> str | None:
    """The id of the document the session teaches from, if its instructions name one."""
    found = _ATTACHED.search(system_prompt)
    return found.group(1) if found else None


def _tag(material: Material, text: MaterialText) -> str:
    head = (
        f'<material id="{material.id}" title="{_attribute(material.title)}" '
        f'kind="{material.kind}" pages="{material.pages}" attached="yes">'
    )
    return (
        f"{head}\nOutline (headings, with the page each starts on):\n{_outline(text)}\n</material>"
    )


def _outline(text: MaterialText) -> str:
    lines: list[str] = []
    seen: tuple[str, int] | None = None
    for chunk in text.chunks:
        if not chunk.heading or (chunk.heading, chunk.level) == seen:
            continue
        seen = (chunk.heading, chunk.level)
        indent = "  " * max(chunk.level - 1, 0)
        lines.append(f"{indent}- {defuse(' '.join(chunk.heading.split()))} (p. {chunk.page})")
    if not lines:
        return f"(no headings; {len(text.pages)} page(s) of text)"
    if len(lines) > OUTLINE_LINES:
        lines = [*lines[:OUTLINE_LINES], f"- … ({len(lines) - OUTLINE_LINES} more headings)"]
    return "\n".join(lines)


def _attribute(value: str) -> str:
    return " ".join(defuse(value).replace('"', "'").split())
