"""The demo-builder: one small, self-contained interactive HTML page."""

from __future__ import annotations

from typing import Annotated

import msgspec

from backend.agent.jobs.base import JobArgs, SubAgentContext, expect
from backend.agent.jobs.html_clean import MAX_DEMO_BYTES, check_demo_html
from backend.agent.jobs.structured import ask_structured
from backend.core.ports import ChatModel
from shared_contracts.jobs import DemoPage
from shared_contracts.tools import DemoArgs


class DemoAnswer(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    title: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    html: Annotated[str, msgspec.Meta(min_length=1)]


_SYSTEM = (
    "You build one small interactive HTML page that helps a learner explore an idea "
    "(sliders, buttons, a canvas — whatever fits). Rules: a complete, self-contained "
    "document; inline <style> and <script> only; no external scripts, stylesheets, fonts, "
    "images or links; no network calls (the page runs in a sandbox with no network); under "
    f"{MAX_DEMO_BYTES // 1000} KB. Reply with JSON: a short `title` and the page as `html`."
)


class DemoBuilder:
    """Builds a demo page for a brief.

    Rules: the page is checked by `check_demo_html` (size limit, external references
    removed); a page that fails the check gets one repair request, then `ModelError`.
    """

    def __init__(self, model: ChatModel) -> None:
        self._model = model

    async def run(self, args: JobArgs, context: SubAgentContext) -> DemoPage:
        """Build the page for `args.brief` (raises `ModelError`)."""
        brief = expect(args, DemoArgs).brief
        return await ask_structured(
            self._model,
            role="demo_builder",
            system=_SYSTEM,
            user=f"Brief: {brief}\n{context.lesson_block()}".strip(),
            answer=DemoAnswer,
            accept=lambda a: DemoPage(title=a.title.strip(), html=check_demo_html(a.html)),
        )


def create_demo_builder(model: ChatModel) -> DemoBuilder:
    """The demo-builder sub-agent on `model` (role "demo_builder")."""
    return DemoBuilder(model)
