"""Offline sub-agents: deterministic, no model, real artifacts chosen by the brief's words.

Every artifact goes through the same sanitisers as a model's, so offline mode exercises
the whole path the UI sees.
"""

from __future__ import annotations

from backend.agent.jobs.artifacts import demos, diagrams
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
from backend.agent.jobs.html_clean import check_demo_html
from backend.agent.jobs.svg_clean import sanitise_svg
from shared_contracts.jobs import DemoPage, JobKind, ResearchNote, Visual
from shared_contracts.tools import DemoArgs, ResearchArgs, VisualArgs

OFFLINE_CAVEAT = (
    "Offline mode: no sources were consulted. This note was assembled from the lesson "
    "plan, not from research; check it against a textbook or a trusted reference."
)


class OfflineResearcher:
    """A study note built from the question and the lesson plan; never cites anything."""

    async def run(self, args: JobArgs, context: SubAgentContext) -> ResearchNote:
        """The note for `args.question`."""
        question = expect(args, ResearchArgs).question
        terms = key_terms(question, 4)
        lines = [f"**Question.** {question}"]
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
        return ResearchNote(title=title, body="\n\n".join(lines), caveat=OFFLINE_CAVEAT)


class OfflineDemoBuilder:
    """A small slider demo: a wave, compound growth, coin flips, or a generic value slider."""

    async def run(self, args: JobArgs, context: SubAgentContext) -> DemoPage:
        """The demo for `args.brief`."""
        brief = expect(args, DemoArgs).brief
        if mentions(brief, WAVE):
            title, body = "Waves: amplitude and frequency", demos.WAVE
        elif mentions(brief, GROWTH):
            title, body = "Compound growth", demos.GROWTH
        elif mentions(brief, CHANCE):
            title, body = "Coin flips and chance", demos.CHANCE
        else:
            title, body = f"Explore: {clip(brief, 60)}", demos.GENERIC
        html = demos.page(title, f"Move the controls and watch what changes. ({brief})", body)
        return DemoPage(title=title, html=check_demo_html(html))


class OfflineVisualMaker:
    """An SVG: a curve, a tree of the lesson plan, or a flow of the brief's steps."""

    async def run(self, args: JobArgs, context: SubAgentContext) -> Visual:
        """The diagram for `args.brief`."""
        brief = expect(args, VisualArgs).brief
        title = clip(brief, 80)
        steps = steps_of(brief) or list(context.plan_titles) or key_terms(brief)
        if mentions(brief, PLOT):
            curve = "sine" if mentions(brief, WAVE) else "parabola"
            curve = "exponential" if mentions(brief, GROWTH) else curve
            svg, caption = (
                diagrams.curve_svg(brief, curve),
                f"A plot of {diagrams.CURVES[curve][0]}.",
            )
        elif mentions(brief, TREE) and not steps_of(brief):
            root = context.goal or title
            children = list(context.plan_titles) or key_terms(brief)
            svg, caption = diagrams.tree_svg(root, children), "How the parts depend on each other."
        else:
            cycle = mentions(brief, ("cycle", "loop"))
            svg = diagrams.flow_svg(title, steps, cycle=cycle)
            caption = "The steps, repeating." if cycle else "The steps in order."
        return Visual(title=title, svg=sanitise_svg(svg), caption=caption)


def offline_subagents() -> dict[JobKind, SubAgent]:
    """The three offline sub-agents, keyed by job kind."""
    return {
        "research": OfflineResearcher(),
        "demo": OfflineDemoBuilder(),
        "visual": OfflineVisualMaker(),
    }
