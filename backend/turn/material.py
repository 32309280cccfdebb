"""A turn's access to the learner's own material: the teacher's material block, the
`search_material` tool, and the passages a plan tool cites, each checked verbatim against
the stored page before it is kept (a quote not found word for word is dropped and logged).

Without material (`MaterialDesk` absent, or a learner with no documents) the teacher's
prompt and tools are exactly what they were before materials existed.
"""

from __future__ import annotations

import logging
from collections import OrderedDict

import msgspec

from backend.agent.material_context import render_material_context
from backend.core.errors import HarnessError, NotFound
from backend.core.passages import checked_passage
from backend.core.plan_tree import PlanArgs, plan_passages
from backend.core.ports import MaterialStore, SearchPort
from shared_contracts.chat import ChatRecord
from shared_contracts.materials import Material, MaterialText, Passage
from shared_contracts.tools import SearchMaterialArgs, SearchOutput

log = logging.getLogger("harness.turn")

CONTEXTS_KEPT = 256
"""Chats whose material block stays rendered (the most recently used)."""


class MaterialDesk:
    """The learner's materials as one chat's turns use them."""

    def __init__(self, materials: MaterialStore, search: SearchPort) -> None:
        self._materials = materials
        self._search = search
        self._contexts: OrderedDict[str, str] = OrderedDict()

    async def context(self, chat_id: str, material_id: str | None) -> str:
        """The teacher's material block for the chat ("" when the learner has none),
        rendered at its first turn (in this process) and reused, like the graph block. A
        read failure yields no block and is retried at the next turn."""
        cached = self._contexts.get(chat_id)
        if cached is not None:
            self._contexts.move_to_end(chat_id)
            return cached
        try:
            block = await self._render(chat_id, material_id)
        except (HarnessError, OSError) as exc:
            log.warning("[chat %s] the material block could not be built: %s", chat_id, exc)
            return ""
        self._contexts[chat_id] = block
        if len(self._contexts) > CONTEXTS_KEPT:
            self._contexts.popitem(last=False)
        return block

    async def _render(self, chat_id: str, material_id: str | None) -> str:
        materials = await self._materials.list_all()
        attached: tuple[Material, MaterialText] | None = None
        if material_id is not None:
            try:
                found = await self._materials.get(material_id)
                attached = (found, await self._materials.text(material_id))
            except NotFound:
                log.warning("[chat %s] its material %s was removed", chat_id, material_id)
        return render_material_context(attached, materials)

    async def search(self, args: SearchMaterialArgs) -> SearchOutput:
        """The best passages for the teacher's query: the stored chunks themselves."""
        hits = await self._search.search(args.query, limit=args.limit, material_id=args.material_id)
        return SearchOutput(hits=hits)

    async def passages(
        self, chat_id: str, args: PlanArgs, default_material: str | None
    ) -> dict[str, list[Passage]]:
        """The checked passages of each new plan node; a quote not found word for word in
        the page it names (or naming no material, a removed one or a page past the end)
        is dropped and logged."""
        checked: dict[str, list[Passage]] = {}
        for node_id, specs in plan_passages(args):
            kept: list[Passage] = []
            for spec in specs:
                material_id = spec.material_id or default_material
                passage = None
                if material_id is not None:
                    passage = await self._checked(material_id, spec.page, spec.quote)
                if passage is None:
                    log.info(
                        "[chat %s] passage dropped from plan node %s: not found word for word "
                        "on page %d of %s: %r",
                        chat_id,
                        node_id,
                        spec.page,
                        material_id,
                        spec.quote[:120],
                    )
                    continue
                kept.append(passage)
            if kept:
                checked[node_id] = kept
        return checked

    async def _checked(self, material_id: str, page: int, quote: str) -> Passage | None:
        try:
            page_text = await self._search.page_text(material_id, page)
            title = (await self._materials.get(material_id)).title
        except NotFound:
            return None
        return checked_passage(quote, page_text, material_id=material_id, page=page, title=title)


def attached_id(record: ChatRecord) -> str | None:
    """The material the chat was started on, if any."""
    material_id = record.material_id
    return None if material_id is msgspec.UNSET else material_id
