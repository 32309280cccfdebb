"""Room → render projection: items, plan rows, dock, status; demos sandboxed, SVG as image."""

from __future__ import annotations

import base64
import re

import msgspec

from shared_contracts.chat import Message, TextPart, ToolPart
from shared_contracts.frames import (
    JobFrame,
    Snapshot,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnFinished,
    VerdictFrame,
)
from shared_contracts.jobs import ChartSeries, ChartSpec, Visual
from shared_contracts.tools import JobOutput
from tests.ui.samples import AT, GRADED, PLAN, QUIZ_KEY, chat_view, demo_job, quiz_part
from ui.model import conversation
from ui.model.chart_svg import chart_svg
from ui.model.conversation import CSP_META, chat_items
from ui.model.plan_view import plan_rows
from ui.model.render import project
from ui.model.room import Room, apply_frames, with_connection


def _job_part(tool: str, job_id: str) -> ToolPart:
    return ToolPart(
        tool_call_id=f"call_{job_id}",
        tool_name=tool,
        state="input-available",
        input={"brief": "show halves"},
        job_id=job_id,
    )


def test_items_skip_plan_tools_and_show_questions_with_verdicts():
    plan_part = ToolPart(tool_call_id="p1", tool_name="plan_init", state="output-available")
    graded = quiz_part("output-available", GRADED)
    room = apply_frames(
        Room(), [ToolCall(message_id="m1", part=plan_part), ToolCall(message_id="m1", part=graded)]
    )
    items = chat_items(room)
    assert [i.kind for i in items] == ["quiz"]
    assert items[0].prompt == "Name the top number"
    assert items[0].given == "numerator" and items[0].graded and not items[0].correct


def test_demo_job_renders_only_into_a_csp_locked_document():
    room = apply_frames(
        Room(),
        [ToolCall(message_id="m1", part=_job_part("demo", "job-1")), JobFrame(job=demo_job())],
    )
    (item,) = chat_items(room)
    assert item.kind == "job" and not item.running
    assert item.demo_doc.startswith(CSP_META) and item.demo_doc.endswith("<p>demo</p>")
    assert "default-src 'none'" in CSP_META


def test_running_job_shows_progress_and_brief():
    room = apply_frames(
        Room(),
        [
            ToolCall(message_id="m1", part=_job_part("demo", "job-1")),
            JobFrame(job=demo_job("running")),
        ],
    )
    (item,) = chat_items(room)
    assert item.running and item.status == "running" and item.title == "show halves"


def test_visual_svg_becomes_an_image_data_uri():
    svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    part = _job_part("visual", "job-2")
    part = ToolPart(
        **{
            **{f: getattr(part, f) for f in part.__struct_fields__},
            "state": "output-available",
            "output": JobOutput(job_id="job-2", status="done", result=Visual(title="V", svg=svg)),
        }
    )
    (item,) = chat_items(apply_frames(Room(), [ToolCall(message_id="m1", part=part)]))
    prefix = "data:image/svg+xml;base64,"
    assert item.image_uri.startswith(prefix)
    assert base64.b64decode(item.image_uri[len(prefix) :]).decode() == svg


def test_chart_spec_draws_an_svg():
    spec = ChartSpec(kind="line", x_label="x", series=[ChartSeries(name="s", x=[0, 1], y=[0, 2])])
    svg = chart_svg(spec)
    assert svg.startswith("<svg") and "polyline" in svg and ">s</text>" in svg


def test_plan_rows_are_depth_first_with_done_and_current():
    rows = plan_rows(PLAN)
    assert [(r.id, r.depth, r.done, r.current) for r in rows] == [
        ("halves", 0, True, False),
        ("compare", 1, False, True),
    ]


def test_project_shows_dock_status_and_offline_label():
    room = with_connection(apply_frames(Room(), [Snapshot(chat=chat_view())]), "connected")
    view = project(room)
    assert view.dock.visible and view.dock.kind == "multiple_choice"
    assert [o.id for o in view.dock.options] == ["a", "b"]
    assert view.status.tutor_label == "Offline tutor"
    assert view.status.connection_label == "Connected"
    online = project(
        apply_frames(Room(), [Snapshot(chat=chat_view(offline=False, model="openai/x"))])
    )
    assert online.status.tutor_label == "openai/x"


def test_verdict_shown_in_the_dock_after_grading():
    room = apply_frames(
        Room(),
        [
            Snapshot(chat=chat_view()),
            VerdictFrame(tool_call_id="call_mc", correct=False, expected="1/2", feedback="Halves."),
        ],
    )
    view = project(room)
    assert not view.dock.visible and view.verdict.visible
    assert (view.verdict.correct, view.verdict.expected, view.verdict.feedback) == (
        False,
        "1/2",
        "Halves.",
    )


def test_projection_never_copies_an_unanswered_quiz_key():
    room = apply_frames(Room(), [Snapshot(chat=chat_view())])
    assert QUIZ_KEY not in repr(project(room))


def test_job_frame_matches_a_part_announced_without_a_job_id():
    part = ToolPart(tool_call_id="call_d1", tool_name="demo", state="input-available")
    room = apply_frames(Room(), [ToolCall(message_id="m1", part=part), JobFrame(job=demo_job())])
    (item,) = chat_items(room)
    assert item.status == "done" and item.demo_doc.endswith("<p>demo</p>")


def test_the_open_question_is_in_the_dock_not_twice_in_the_transcript():
    room = apply_frames(Room(), [Snapshot(chat=chat_view())])
    pending_part = ToolPart(tool_call_id="call_mc", tool_name="quiz", state="input-available")
    room = apply_frames(room, [ToolCall(message_id="m2", part=pending_part)])
    assert "call_mc" not in {i.key for i in chat_items(room)}
    assert [i.prompt for i in chat_items(room) if i.kind == "quiz"] == ["Name the top number"]


def test_a_question_the_server_refused_is_not_shown_as_waiting_for_an_answer():
    refused = msgspec.structs.replace(
        quiz_part(), state="output-error", error="quiz: correct 'z' is not one of ['a', 'b']"
    )
    asked = msgspec.structs.replace(quiz_part(), tool_call_id="call_q2")
    room = apply_frames(
        Room(),
        [
            ToolCall(message_id="m1", part=quiz_part()),
            ToolResult(part=refused),
            ToolCall(message_id="m1", part=asked),
        ],
    )
    assert [i.key for i in chat_items(room)] == ["m1:1"]  # only the question really asked


def _bars(svg: str) -> list[tuple[float, float, float, float]]:
    found = re.findall(r'<rect x="([-\d.]+)" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)"', svg)
    return [tuple(map(float, bar)) for bar in found]


def test_a_bar_chart_grows_from_zero_inside_its_axes_with_values_on_them():
    series = ChartSeries(name="v", x=[1, 2, 3], y=[0.5, 0.25, 0.75])
    svg = chart_svg(ChartSpec(kind="bar", x_label="fraction", y_label="value", series=[series]))
    bars = _bars(svg)
    assert len(bars) == 3
    heights = [h for _, _, _, h in bars]
    assert heights[1] > 0 and abs(heights[0] - 2 * heights[1]) < 0.2  # 0.25 is half of 0.5
    assert all(left >= 40 and left + width <= 440 for left, _, width, _ in bars)
    assert ">0</text>" in svg and ">0.75</text>" in svg and ">2</text>" in svg
    legend_y = float(re.search(r'y="([\d.]+)"[^>]*>v</text>', svg).group(1))
    assert legend_y < min(top for _, top, _, _ in bars)  # the legend covers no bar


def test_model_math_reaches_the_renderer_in_forms_it_typesets_as_display_or_inline():
    said = "So \\(x^2\\) grows:\n\n$$\\frac{2}{3} = \\frac{8}{12}$$\n\nand `\\(code\\)` stays."
    view = chat_view(
        messages=[
            Message(id="m1", role="assistant", turn=1, created_at=AT, parts=[TextPart(text=said)])
        ]
    )
    (item,) = chat_items(apply_frames(Room(), [Snapshot(chat=view)]))
    assert item.text == (
        "So $x^2$ grows:\n\n$$\n\\frac{2}{3} = \\frac{8}{12}\n$$\n\nand `\\(code\\)` stays."
    )


def test_earlier_turns_are_split_off_and_their_math_is_normalised_once():
    """Each streamed frame projected the whole conversation again: normalising the math of
    318 unchanged messages was ~8 ms of Python per 50 ms frame (now ~0.5 ms)."""
    messages = [
        Message(id="u1", role="user", turn=1, created_at=AT, parts=[TextPart(text="why?")]),
        Message(
            id="a1", role="assistant", turn=1, created_at=AT, parts=[TextPart(text=r"\(x^7\)")]
        ),
        Message(id="u2", role="user", turn=2, created_at=AT, parts=[TextPart(text="and?")]),
        Message(
            id="a2", role="assistant", turn=2, created_at=AT, parts=[TextPart(text=r"\(y^9\)")]
        ),
    ]
    view = chat_view(messages=messages, pending_question=None)
    room = apply_frames(Room(), [Snapshot(chat=view)])
    conversation.math_ready.cache_clear()
    first = project(room)
    assert [i.text for i in first.items] == ["why?", "$x^7$"]
    assert [i.text for i in first.turn_items] == ["and?", "$y^9$"] and first.live.text == ""
    streamed = apply_frames(room, [TextDelta(message_id="a2", delta=" more")])
    again = project(streamed)
    assert again.items == first.items and again.turn_items == first.turn_items[:1]
    assert again.live.text == "$y^9$ more"  # the streamed block, apart from the turn's others
    ended = project(apply_frames(streamed, [TurnFinished(turn_id=2, reason="stop")]))
    assert ended == again  # nothing moves when the turn ends (no redraw of the answer)
    info = conversation.math_ready.cache_info()
    assert info.hits >= 2 and info.misses == 2  # the earlier turn, normalised once
    assert info.currsize == 2  # the growing answer is not remembered frame by frame
