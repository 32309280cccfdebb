"""The three LLM sub-agents on a scripted model: structured answers, repair, no invented URLs."""

from __future__ import annotations

import msgspec
import pytest

from backend.agent.jobs import (
    Hit,
    SubAgentContext,
    create_demo_builder,
    create_researcher,
    create_visual_maker,
)
from backend.agent.jobs.researcher import NO_SEARCH_CAVEAT
from backend.core.errors import BadToolArguments, ModelError
from shared_contracts.jobs import DemoPage, ResearchNote, Visual
from shared_contracts.tools import DemoArgs, ResearchArgs, VisualArgs
from tests.fakes import ScriptedModel, text_reply

CTX = SubAgentContext(chat_id="chat-1", job_id="job-0001", goal="Waves", plan_titles=("Sine",))


def answer(**fields: object) -> list:
    return text_reply(msgspec.json.encode(fields).decode(), chunk=50)


class RecordingSearch:
    def __init__(self, hits: dict[str, list[Hit]], fail: set[str] = frozenset()) -> None:
        self.hits, self.fail, self.queries = hits, fail, []

    async def search(self, query: str) -> list[Hit]:
        self.queries.append(query)
        if query in self.fail:
            raise OSError("search backend down")
        return self.hits.get(query, [])


# ---- researcher ---------------------------------------------------------------------------


async def test_researcher_without_search_invents_no_urls_and_says_so() -> None:
    model = ScriptedModel(
        [
            answer(
                title="Sine waves (see https://made.up/sine)",
                body="A sine wave repeats [1]. See https://example.org/fake, "
                "[this page](http://invented.example/x) and www.nowhere.test/page.",
                sources=[1, 2],
                caveat="From memory.",
            )
        ]
    )
    note = await create_researcher(model).run(ResearchArgs(question="What is a sine wave?"), CTX)
    assert isinstance(note, ResearchNote)
    text = note.title + note.body + note.caveat
    for url in ("made.up", "example.org", "invented.example", "nowhere.test", "http", "www."):
        assert url not in text
    assert "this page" in note.body  # the markdown link keeps its words
    assert note.sources == []
    assert note.caveat.startswith(NO_SEARCH_CAVEAT) and note.caveat.endswith("From memory.")
    (request,) = model.requests
    assert request.role == "researcher"
    assert request.response_schema is not None
    assert request.response_schema["required"] == ["title", "body", "sources", "caveat"]
    assert "Waves" in request.messages[-1].content  # the lesson context reaches the prompt


async def test_researcher_with_search_cites_only_hits_by_number() -> None:
    hits = {
        "sine wave": [Hit(title="Sine wave", url="https://en.wikipedia.org/wiki/Sine_wave")],
        "sine definition": [
            Hit(title="Sine wave", url="https://en.wikipedia.org/wiki/Sine_wave"),  # duplicate
            Hit(title="Trig basics", url="https://trig.example/basics", snippet="sin x"),
        ],
    }
    search = RecordingSearch(hits, fail={"broken query"})
    model = ScriptedModel(
        [
            answer(queries=["sine wave", " sine definition ", "broken query", "sine wave"]),
            answer(
                title="Sine waves",
                body="Repeats every 2π [1][2]. Also https://invented.example/x and "
                "https://trig.example/basics.",
                sources=[2, 1, 2, 7, 0],
                caveat="",
            ),
        ]
    )
    note = await create_researcher(model, search).run(ResearchArgs(question="sine?"), CTX)
    assert search.queries == ["sine wave", "sine definition", "broken query"]
    assert [s.url for s in note.sources] == [
        "https://trig.example/basics",
        "https://en.wikipedia.org/wiki/Sine_wave",
    ]
    assert "invented.example" not in note.body and "https://trig.example/basics" in note.body
    assert note.caveat == ""
    numbered = model.requests[1].messages[-1].content
    assert "[1] Sine wave — https://en.wikipedia.org/wiki/Sine_wave" in numbered
    assert "[2] Trig basics — https://trig.example/basics" in numbered


async def test_researcher_with_search_that_finds_nothing_says_so() -> None:
    model = ScriptedModel(
        [
            answer(queries=["q"]),
            answer(title="T", body="Body with http://made.up/x", sources=[1], caveat=""),
        ]
    )
    note = await create_researcher(model, RecordingSearch({})).run(ResearchArgs(question="q"), CTX)
    assert note.sources == [] and "made.up" not in note.body
    assert "no sources" in note.caveat


async def test_researcher_repairs_one_malformed_answer() -> None:
    model = ScriptedModel(
        [
            text_reply("Sure! Here is your note: sine waves repeat."),
            answer(title="Sine", body="They repeat.", sources=[], caveat=""),
        ]
    )
    note = await create_researcher(model).run(ResearchArgs(question="sine?"), CTX)
    assert note.body == "They repeat."
    repair = model.requests[1].messages
    assert [m.role for m in repair] == ["system", "user", "assistant", "user"]
    assert repair[2].content.startswith("Sure!") and "rejected" in repair[3].content


async def test_two_malformed_answers_raise_model_error() -> None:
    model = ScriptedModel(
        [
            answer(title="x", body="", sources=[], caveat=""),  # min_length violated
            answer(title="x", body="ok", sources="none", caveat=""),  # wrong type
        ]
    )
    with pytest.raises(ModelError, match="malformed"):
        await create_researcher(model).run(ResearchArgs(question="q"), CTX)
    assert len(model.requests) == 2


async def test_model_errors_propagate_without_a_repair() -> None:
    model = ScriptedModel([ModelError("429", retryable=True)])
    with pytest.raises(ModelError, match="429"):
        await create_researcher(model).run(ResearchArgs(question="q"), CTX)
    assert len(model.requests) == 1


async def test_a_sub_agent_given_the_wrong_args_refuses() -> None:
    with pytest.raises(BadToolArguments):
        await create_researcher(ScriptedModel([])).run(DemoArgs(brief="x"), CTX)


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
