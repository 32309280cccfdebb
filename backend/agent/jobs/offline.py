"""Offline sub-agents: deterministic, no model, real artifacts chosen by the brief's words;
when none makes what a brief asks for, the job says it needs a model.

Every artifact goes through the same sanitisers as a model's, so offline mode exercises
the whole path the UI sees.
"""

from __future__ import annotations

import re

from backend.agent.jobs.artifacts import demos, diagrams, lesson_demos, lesson_visuals
from backend.agent.jobs.artifacts.keywords import (
    CHANCE,
    GROWTH,
    PLOT,
    TREE,
    WAVE,
    clip,
    key_terms,
    mentions,
    steps_of,
)
from backend.agent.jobs.base import JobArgs, SubAgent, SubAgentContext, expect
from backend.agent.jobs.errors import NeedsModel
from backend.agent.jobs.html_clean import check_demo_html
from backend.agent.jobs.svg_clean import sanitise_svg
from backend.agent.sentences import best_sentences
from backend.agent.sentences import content_words as sentence_terms
from backend.core.errors import HarnessError
from backend.core.passages import checked_quote
from backend.core.ports import SearchPort
from shared_contracts.jobs import DemoPage, JobKind, ResearchNote, Source, Visual
from shared_contracts.tools import DemoArgs, ResearchArgs, VisualArgs

OFFLINE_QUOTES = 3
NOTHING_FOUND = "Nothing in your materials answered this question."
OFFLINE_CAVEAT = (
    "Offline mode: no sources were consulted. This note was assembled from the lesson "
    "plan, not from research; check it against a textbook or a trusted reference."
)


class OfflineResearcher:
    """A study note: the passages of the learner's materials that answer the question, each
    a sentence quoted from the stored text with its source and page; when none does (or
    there is no search), a note built from the question and the lesson plan that cites
    nothing and says so."""

    def __init__(self, search: SearchPort | None = None) -> None:
        self._search = search

    async def run(self, args: JobArgs, context: SubAgentContext) -> ResearchNote:
        """The note for `args.question`."""
        question = expect(args, ResearchArgs).question
        searched = self._search is not None and await self._search.has_material()
        sources = await self._quoted(question, context) if searched else []
        if sources:
            return _grounded_note(question, sources)
        lines = [f"**Question.** {question}"]
        terms = key_terms(question, 4)
        if context.goal or context.plan_titles:
            where = f"the lesson *{context.goal}*" if context.goal else "this lesson"
            steps = ", ".join(context.plan_titles) or "its first steps"
            lines.append(
                f"**Where it fits.** This question belongs to {where}, which covers: {steps}."
            )
        lines.append(
            "**How to work on it.**\n"
            f"- Say in one sentence what {' / '.join(terms) or 'the idea'} means.\n"
            "- Work one small example by hand, then change one number and predict the result.\n"
            "- Name one thing that would be true if your understanding were wrong, and check it."
        )
        title = f"Study note: {clip(question, 80)}"
        caveat = f"{OFFLINE_CAVEAT} {NOTHING_FOUND}" if searched else OFFLINE_CAVEAT
        return ResearchNote(title=title, body="\n\n".join(lines), caveat=caveat)

    async def _quoted(self, question: str, context: SubAgentContext) -> list[Source]:
        """Up to `OFFLINE_QUOTES` sentences of the best hits, each checked verbatim against
        its stored page (as a model's citation would be)."""
        assert self._search is not None
        try:
            hits = await self._search.search(question, limit=OFFLINE_QUOTES)
        except HarnessError as exc:
            context.audit.append(f"search failed: {exc}")
            return []
        terms = sentence_terms(question)
        sources: list[Source] = []
        for hit in hits:
            picked = best_sentences(hit.text, terms, 1)
            if not picked:
                continue
            page = await self._search.page_text(hit.material_id, hit.page)
            quote = checked_quote(picked[0].text, page)
            if quote is None:
                context.audit.append(f"quote not found in {hit.material_id} page {hit.page}")
                continue
            sources.append(
                Source(title=hit.title, quote=quote, material_id=hit.material_id, page=hit.page)
            )
        return sources


def _grounded_note(question: str, sources: list[Source]) -> ResearchNote:
    quoted = [
        f"> {source.quote}\n\n— *{source.title}*, page {source.page} [{i}]"
        for i, source in enumerate(sources, start=1)
    ]
    body = "\n\n".join([f"**Question.** {question}", "**From your material.**", *quoted])
    return ResearchNote(
        title=f"From your material: {clip(question, 80)}",
        body=body,
        sources=sources,
        caveat="Offline mode: these are the passages of your material that match the "
        "question best, quoted as they are; no model summarised them.",
    )


class OfflineDemoBuilder:
    """A demo that does what the brief asks, or `NeedsModel`: list boxes that light up for
    an index or a slice, fractions drawn as bars and added, a wave, compound growth or coin
    flips."""

    async def run(self, args: JobArgs, context: SubAgentContext) -> DemoPage:
        """The demo for `args.brief`."""
        brief = expect(args, DemoArgs).brief
        if mentions(brief, ("list",)) and mentions(brief, ("index", "slice")):
            title, intro, body = (
                "Indexes and slices of a Python list",
                "Type an index or a slice: the items it selects light up, and the line below "
                "shows what Python gives back.",
                lesson_demos.LIST_INDEXING,
            )
        elif mentions(brief, ("fraction",)) and mentions(brief, ("add", "sum", "common")):
            title, intro, body = (
                "Adding fractions with bars",
                "Pick two fractions: see them as bars, over a common denominator, and added.",
                lesson_demos.FRACTION_ADDER,
            )
        elif mentions(brief, WAVE):
            title, intro, body = "Waves: amplitude and frequency", _MOVE, demos.WAVE
        elif mentions(brief, GROWTH):
            title, intro, body = "Compound growth", _MOVE, demos.GROWTH
        elif mentions(brief, CHANCE):
            title, intro, body = "Coin flips and chance", _MOVE, demos.CHANCE
        else:
            raise NeedsModel(needs_model("demo", brief))
        return DemoPage(title=title, html=check_demo_html(demos.page(title, intro, body)))


class OfflineVisualMaker:
    """A diagram that draws what the brief describes, or `NeedsModel`: fraction bars as the
    brief splits and shades them, a leaf cell's photosynthesis, a plotted curve, the steps
    a brief spells out with arrows, or the lesson plan as a tree."""

    async def run(self, args: JobArgs, context: SubAgentContext) -> Visual:
        """The diagram for `args.brief`."""
        brief = expect(args, VisualArgs).brief
        title = clip(brief, 80)
        pairs = lesson_visuals.fraction_pairs(brief)
        if pairs:
            svg, caption = lesson_visuals.fraction_bars_svg(pairs)
            title = "Fraction bars: " + " and ".join(f"{s}/{p}" for s, p in pairs)
        elif mentions(brief, ("photosynth", "chloroplast", "leaf cell")):
            svg, caption = lesson_visuals.leaf_cell_svg()
            title = "Photosynthesis: what goes in and what comes out"
        elif mentions(brief, PLOT) and mentions(brief, (*WAVE, *GROWTH, "parabola", "square")):
            curve = "sine" if mentions(brief, WAVE) else "parabola"
            curve = "exponential" if mentions(brief, GROWTH) else curve
            svg, caption = (
                diagrams.curve_svg(brief, curve),
                f"A plot of {diagrams.CURVES[curve][0]}.",
            )
        elif _ARROWS.search(brief) and steps_of(brief):
            cycle = mentions(brief, ("cycle", "loop"))
            svg = diagrams.flow_svg(title, steps_of(brief), cycle=cycle)
            caption = "The steps, repeating." if cycle else "The steps in order."
        elif mentions(brief, TREE) and context.plan_titles:
            root = context.goal or title
            svg = diagrams.tree_svg(root, list(context.plan_titles))
            caption = "How the parts of the lesson depend on each other."
        else:
            raise NeedsModel(needs_model("diagram", brief))
        return Visual(title=title, svg=sanitise_svg(svg), caption=caption)


_MOVE = "Move the controls and watch what changes."
_ARROWS = re.compile(r"->|→|=>|\bthen\b", re.IGNORECASE)


def needs_model(what: str, brief: str) -> str:
    return (
        f"Offline mode cannot make this {what} (“{clip(brief, 80)}”): it needs a model. "
        "Set LH_MODEL to have one built; the built-in lessons' demos and diagrams work offline."
    )


def offline_subagents(search: SearchPort | None = None) -> dict[JobKind, SubAgent]:
    """The three offline sub-agents, keyed by job kind (the researcher over `search`, the
    learner's materials, when given)."""
    return {
        "research": OfflineResearcher(search),
        "demo": OfflineDemoBuilder(),
        "visual": OfflineVisualMaker(),
    }
