"""The visual-maker: a sanitised SVG diagram, or a chart spec the UI renders."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from backend.agent.jobs.base import JobArgs, SubAgentContext, expect
from backend.agent.jobs.structured import Malformed, ask_structured
from backend.agent.jobs.svg_clean import sanitise_svg
from backend.core.ports import ChatModel
from shared_contracts.jobs import ChartSeries, ChartSpec, Visual
from shared_contracts.tools import VisualArgs

MAX_POINTS = 500


class SeriesAnswer(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: str
    x: list[float]
    y: list[float]


class ChartAnswer(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    kind: Literal["line", "bar", "scatter"]
    x_label: str
    y_label: str
    series: Annotated[list[SeriesAnswer], msgspec.Meta(min_length=1, max_length=10)]


class VisualAnswer(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    title: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    caption: str
    svg: str | None
    """A complete <svg> diagram, or null when `chart` is given."""
    chart: ChartAnswer | None


_SYSTEM = (
    "You draw one clear diagram for a learner. Either give `svg`: a complete, standalone "
    "<svg> element with a viewBox (shapes, paths, text, markers, gradients only — no "
    "scripts, no event handlers, no links, no images, no external references) and `chart` "
    "null; or, for numeric data, give `chart` (line, bar or scatter series) and `svg` null. "
    "Reply with JSON: `title`, a one-sentence `caption`, `svg`, `chart`."
)


def _chart(answer: ChartAnswer) -> ChartSpec:
    for s in answer.series:
        if not s.x or len(s.x) != len(s.y) or len(s.x) > MAX_POINTS:
            raise Malformed(f"series {s.name!r}: x and y need the same length, 1-{MAX_POINTS}")
    series = [ChartSeries(name=s.name, x=s.x, y=s.y) for s in answer.series]
    return ChartSpec(
        kind=answer.kind, x_label=answer.x_label, y_label=answer.y_label, series=series
    )


def _visual(answer: VisualAnswer) -> Visual:
    title, caption = answer.title.strip(), answer.caption.strip()
    if answer.svg and answer.chart is None:
        return Visual(title=title, caption=caption, svg=sanitise_svg(answer.svg))
    if answer.chart is not None and not answer.svg:
        return Visual(title=title, caption=caption, chart=_chart(answer.chart))
    raise Malformed("give exactly one of `svg` and `chart`")


class VisualMaker:
    """Draws a diagram for a brief.

    Rules: an SVG always passes `sanitise_svg` (allowlist, no scripts, handlers or external
    references); a chart has 1-10 series of equal-length x/y; anything else gets one repair
    request, then `ModelError`.
    """

    def __init__(self, model: ChatModel) -> None:
        self._model = model

    async def run(self, args: JobArgs, context: SubAgentContext) -> Visual:
        """Draw the visual for `args.brief` (raises `ModelError`)."""
        brief = expect(args, VisualArgs).brief
        return await ask_structured(
            self._model,
            role="visual_maker",
            system=_SYSTEM,
            user=f"Brief: {brief}\n{context.lesson_block()}".strip(),
            answer=VisualAnswer,
            accept=_visual,
        )


def create_visual_maker(model: ChatModel) -> VisualMaker:
    """The visual-maker sub-agent on `model` (role "visual_maker")."""
    return VisualMaker(model)
