"""Offline sub-agents: deterministic, real artifacts that pass the sanitisers."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from backend.agent.jobs import SubAgentContext, check_demo_html, offline_subagents, sanitise_svg
from backend.agent.jobs.artifacts.diagrams import LINE_CHARS
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
        ("fractions on a number line", "Explore: fractions on a number line", 'type="range"'),
    ],
)
async def test_offline_demo_is_a_working_self_contained_page(
    brief: str, title: str, control: str
) -> None:
    page = await offline_subagents()["demo"].run(DemoArgs(brief=brief), CTX)
    assert isinstance(page, DemoPage) and page.title == title
    assert control in page.html and "<script>" in page.html and "addEventListener" in page.html
    assert check_demo_html(page.html) == page.html
    assert "src=" not in page.html and "href=" not in page.html and "http" not in page.html
    assert len(page.html.encode()) < 10_000


@pytest.mark.parametrize(
    ("brief", "expect"),
    [
        ("plot a parabola", "<polyline"),
        ("graph of exponential growth", "y = 2^x"),
        ("the plan tree of this lesson", "Equivalent fractions"),
        ("evaporation -> condensation -> precipitation: the water cycle", "condensation"),
        ("how fractions relate", "Adding fractions"),
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
    demo = await offline_subagents()["demo"].run(DemoArgs(brief=brief), CTX)
    assert "<script>alert" not in visual.svg and "<script>alert" not in demo.html
    ET.fromstring(visual.svg)


async def test_offline_flow_boxes_wrap_their_steps_instead_of_cutting_them() -> None:
    brief = (
        "Two fraction bars of equal length: one split into 5 parts with 3 shaded, "
        "one split into 20 parts with 12 shaded, showing the shaded lengths match"
    )
    visual = await offline_subagents()["visual"].run(VisualArgs(brief=brief), CTX)
    assert sanitise_svg(visual.svg) == visual.svg
    svg = "{http://www.w3.org/2000/svg}"
    boxes = [
        [span.text or "" for span in text.iter(f"{svg}tspan")]
        for text in ET.fromstring(visual.svg).iter(f"{svg}text")
    ]
    assert ["one split into 20", "parts with 12 shaded"] in boxes  # whole, on two lines
    assert ["showing the shaded", "lengths match"] in boxes
    long_step = next(lines for lines in boxes if lines and lines[0] == "Two fraction bars of")
    assert len(long_step) == 3 and long_step[-1] == "split into 5 parts…"  # cut at a word
    assert all(len(line) <= LINE_CHARS for lines in boxes for line in lines)
