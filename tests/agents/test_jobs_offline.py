"""Offline sub-agents: deterministic, real artifacts that pass the sanitisers."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from backend.agent.jobs import SubAgentContext, check_demo_html, offline_subagents, sanitise_svg
from backend.agent.jobs.artifacts.diagrams import LINE_CHARS
from backend.agent.jobs.errors import NeedsModel
from shared_contracts.jobs import DemoPage, ResearchNote, Visual
from shared_contracts.tools import DemoArgs, ResearchArgs, VisualArgs

CTX = SubAgentContext(
    chat_id="chat-1",
    job_id="job-0001",
    goal="Fractions",
    plan_titles=("What a fraction is", "Equivalent fractions", "Adding fractions"),
)


async def test_offline_research_note_cites_nothing_and_says_why() -> None:
    agent = offline_subagents()["research"]
    note = await agent.run(ResearchArgs(question="Why is 2/4 equal to 1/2?"), CTX)
    assert isinstance(note, ResearchNote)
    assert note.sources == [] and "no sources were consulted" in note.caveat
    assert "Why is 2/4 equal to 1/2?" in note.body and "Equivalent fractions" in note.body
    assert "http" not in note.body
    assert note == await agent.run(ResearchArgs(question="Why is 2/4 equal to 1/2?"), CTX)


@pytest.mark.parametrize(
    ("brief", "title", "control"),
    [
        ("show how frequency changes a sine wave", "Waves: amplitude and frequency", 'id="freq"'),
        ("compound interest over the years", "Compound growth", 'id="rate"'),
        ("the probability of heads", "Coin flips and chance", 'id="go"'),
        ("a Python list as boxes; type an index or a slice", "Indexes and slices", 'id="q"'),
        ("pick two fractions with sliders and add them", "Adding fractions", 'id="d"'),
    ],
)
async def test_offline_demo_is_a_working_self_contained_page(
    brief: str, title: str, control: str
) -> None:
    page = await offline_subagents()["demo"].run(DemoArgs(brief=brief), CTX)
    assert isinstance(page, DemoPage) and page.title.startswith(title)
    assert control in page.html and "<script>" in page.html and "addEventListener" in page.html
    assert check_demo_html(page.html) == page.html
    assert "src=" not in page.html and "href=" not in page.html and "http" not in page.html
    assert len(page.html.encode()) < 12_000


@pytest.mark.parametrize(
    ("brief", "expect"),
    [
        ("plot a parabola", "<polyline"),
        ("graph of exponential growth", "y = 2^x"),
        ("the plan tree of this lesson", "Equivalent fractions"),
        ("evaporation -> condensation -> precipitation: the water cycle", "condensation"),
        ("bars split into 4 parts with 1 shaded and split into 8 parts with 2 shaded", "2/8"),
        ("a leaf cell with chloroplasts: what goes in and out", "carbon dioxide"),
    ],
)
async def test_offline_visual_is_a_valid_sanitised_svg(brief: str, expect: str) -> None:
    visual = await offline_subagents()["visual"].run(VisualArgs(brief=brief), CTX)
    assert isinstance(visual, Visual) and visual.chart is None and visual.caption
    assert expect in visual.svg
    assert sanitise_svg(visual.svg) == visual.svg
    root = ET.fromstring(visual.svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("viewBox")


async def test_offline_agents_escape_the_brief() -> None:
    brief = 'a <script>alert("x")</script> & <b>tree</b> -> step two'
    visual = await offline_subagents()["visual"].run(VisualArgs(brief=brief), CTX)
    assert "<script>alert" not in visual.svg
    ET.fromstring(visual.svg)


@pytest.mark.parametrize(
    ("kind", "brief"),
    [
        ("demo", "fractions on a number line"),
        ("demo", "an interactive map of the Roman roads"),
        ("visual", "how fractions relate"),
        ("visual", "a portrait of Ada Lovelace"),
    ],
)
async def test_any_other_brief_says_plainly_it_needs_a_model(kind: str, brief: str) -> None:
    args = DemoArgs(brief=brief) if kind == "demo" else VisualArgs(brief=brief)
    with pytest.raises(NeedsModel) as caught:
        await offline_subagents()[kind].run(args, CTX)
    message = caught.value.public_message()
    assert "needs a model" in message and brief in message and "LH_MODEL" in message


async def test_the_fraction_bars_are_split_and_shaded_as_the_brief_says() -> None:
    brief = (
        "Two fraction bars of equal length: one split into 5 parts with 3 shaded, "
        "one split into 20 parts with 12 shaded, showing the shaded lengths match."
    )
    visual = await offline_subagents()["visual"].run(VisualArgs(brief=brief), CTX)
    assert sanitise_svg(visual.svg) == visual.svg
    svg = "{http://www.w3.org/2000/svg}"
    rects = list(ET.fromstring(visual.svg).iter(f"{svg}rect"))
    bars: dict[str, list[ET.Element]] = {}
    for rect in rects:
        bars.setdefault(rect.get("y") or "", []).append(rect)
    first, second = bars.values()
    assert [len(first), len(second)] == [5, 20]
    assert [sum(r.get("fill") == "#4a7bd0" for r in bar) for bar in (first, second)] == [3, 12]
    widths = [sum(float(r.get("width") or 0) for r in bar) for bar in (first, second)]
    assert abs(widths[0] - widths[1]) < 0.01  # equal length
    assert visual.caption == "The shaded lengths match: 3/5 = 12/20."


async def test_the_leaf_cell_shows_what_goes_in_and_what_comes_out() -> None:
    brief = (
        "A labelled diagram of a leaf cell with chloroplasts: light, water and carbon "
        "dioxide arrows going in, glucose and oxygen arrows coming out."
    )
    visual = await offline_subagents()["visual"].run(VisualArgs(brief=brief), CTX)
    root = ET.fromstring(sanitise_svg(visual.svg))
    svg = "{http://www.w3.org/2000/svg}"
    labels = " ".join(t.text or "" for t in root.iter(f"{svg}text"))
    for word in ("light", "water", "carbon dioxide", "glucose", "oxygen", "chloroplasts"):
        assert word in labels
    assert len(list(root.iter(f"{svg}line"))) == 5  # three arrows in, two out
    assert len(list(root.iter(f"{svg}ellipse"))) >= 3


async def test_offline_flow_boxes_wrap_their_steps_instead_of_cutting_them() -> None:
    brief = (
        "Water slowly evaporates from the warm sea surface on long sunny days -> "
        "vapour cools into clouds -> rain falls back to the ground"
    )
    visual = await offline_subagents()["visual"].run(VisualArgs(brief=brief), CTX)
    assert sanitise_svg(visual.svg) == visual.svg
    svg = "{http://www.w3.org/2000/svg}"
    boxes = [
        [span.text or "" for span in text.iter(f"{svg}tspan")]
        for text in ET.fromstring(visual.svg).iter(f"{svg}text")
    ]
    assert ["vapour cools into", "clouds"] in boxes  # whole, on two lines
    assert ["rain falls back to the", "ground"] in boxes
    long_step = next(lines for lines in boxes if lines and lines[0] == "Water slowly")
    assert len(long_step) == 3 and long_step[-1] == "warm sea surface on…"  # cut at a word
    assert all(len(line) <= LINE_CHARS for lines in boxes for line in lines)
