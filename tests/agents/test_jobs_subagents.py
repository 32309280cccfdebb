"""The demo-builder and the visual-maker on a scripted model: structured answers, repair,
sanitised artifacts (the researcher: test_researcher.py)."""

from __future__ import annotations

import msgspec

from backend.agent.jobs import SubAgentContext, create_demo_builder, create_visual_maker
from shared_contracts.jobs import DemoPage, Visual
from shared_contracts.tools import DemoArgs, VisualArgs
from tests.fakes import ScriptedModel, text_reply

CTX = SubAgentContext(chat_id="chat-1", job_id="job-0001", goal="Waves", plan_titles=("Sine",))


def answer(**fields: object) -> list:
    return text_reply(msgspec.json.encode(fields).decode(), chunk=50)


# ---- demo-builder -------------------------------------------------------------------------


async def test_demo_builder_returns_a_checked_page() -> None:
    html = (
        '<!DOCTYPE html><html><body><input id="s" type="range"><script>s.oninput = () => 1;'
        '</script><script src="https://cdn.example/lib.js"></script></body></html>'
    )
    model = ScriptedModel([answer(title="Slider", html=html)])
    page = await create_demo_builder(model).run(DemoArgs(brief="a slider"), CTX)
    assert isinstance(page, DemoPage) and page.title == "Slider"
    assert "cdn.example" not in page.html and "s.oninput = () => 1;" in page.html
    assert model.requests[0].role == "demo_builder"


async def test_demo_builder_repairs_an_oversized_page() -> None:
    model = ScriptedModel(
        [
            answer(title="Huge", html="<p>" + "x" * 250_000 + "</p>"),
            answer(title="Small", html="<p>ok</p><script>1</script>"),
        ]
    )
    page = await create_demo_builder(model).run(DemoArgs(brief="b"), CTX)
    assert page.title == "Small"
    assert "limit" in model.requests[1].messages[-1].content


# ---- visual-maker -------------------------------------------------------------------------

SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 9 9"><circle r="3" onclick="x()"/></svg>'
)


async def test_visual_maker_returns_a_sanitised_svg() -> None:
    model = ScriptedModel([answer(title="Dot", caption="A dot.", svg=SVG, chart=None)])
    visual = await create_visual_maker(model).run(VisualArgs(brief="a dot"), CTX)
    assert isinstance(visual, Visual) and visual.chart is None
    assert "<circle" in visual.svg and "onclick" not in visual.svg
    assert model.requests[0].role == "visual_maker"


async def test_visual_maker_repairs_an_svg_with_nothing_drawable() -> None:
    bad = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    model = ScriptedModel(
        [
            answer(title="Bad", caption="", svg=bad, chart=None),
            answer(title="Good", caption="", svg=SVG, chart=None),
        ]
    )
    visual = await create_visual_maker(model).run(VisualArgs(brief="b"), CTX)
    assert visual.title == "Good"
    assert "nothing drawable" in model.requests[1].messages[-1].content


async def test_visual_maker_accepts_a_chart_and_rejects_both_or_neither() -> None:
    chart = {
        "kind": "line",
        "x_label": "t",
        "y_label": "v",
        "series": [{"name": "s", "x": [0, 1, 2], "y": [0, 1, 4]}],
    }
    model = ScriptedModel(
        [
            answer(title="Both", caption="", svg=SVG, chart=chart),
            answer(title="Chart", caption="Growth.", svg=None, chart=chart),
        ]
    )
    visual = await create_visual_maker(model).run(VisualArgs(brief="b"), CTX)
    assert visual.svg == "" and visual.chart is not None
    assert visual.chart.series[0].y == [0.0, 1.0, 4.0]
    assert "exactly one" in model.requests[1].messages[-1].content
