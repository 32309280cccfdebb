"""Trace events → replay timeline rows and details, without a browser."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import get_args

import msgspec
import pytest

from shared_contracts.chat import UNTITLED
from shared_contracts.extraction import ExtractorOutput
from shared_contracts.jobs import Job
from shared_contracts.model_io import ModelMessage, ModelRequest, ModelToolCall, ToolSpec, Usage
from shared_contracts.plan import PlanNode, PlanTree
from shared_contracts.questions import Verdict
from shared_contracts.tools import GradedOutput, PlanOutput
from shared_contracts.trace import (
    AnyTraceEvent,
    CheckpointEvent,
    ClockEvent,
    ExtractionEvent,
    IdEvent,
    InboundFrameEvent,
    JobTraceEvent,
    MarkEvent,
    ModelCallEvent,
    OutboundFrameEvent,
    PromptEvent,
    QuizEvent,
    TimedChunk,
    ToolRunEvent,
)
from tests.ui.state_doubles import substate
from ui.api import ApiError
from ui.model import replay_detail as rd
from ui.model import replay_text as rx_text
from ui.model import replay_timeline as rt
from ui.state.replay_state import ReplayState, chat_id_from_replay_path, trace_problem

AT = datetime(2026, 1, 1, tzinfo=UTC)
CONTEXT = "### Nodes\n- `node-1` [verified] fractions have a denominator"
SYSTEM = f"You are a tutor.\n\n## What the learner knows\n{CONTEXT}\n\nBe kind."
PLAN_1 = PlanTree(goal="Fractions", nodes=[PlanNode(id="halves", title="Halves")], version=1)
PLAN_2 = PlanTree(
    goal="Fractions",
    nodes=[
        PlanNode(id="halves", title="Halves", status="done"),
        PlanNode(id="thirds", title="Thirds", parent="halves", status="active"),
    ],
    current="thirds",
    version=2,
)
ENC = msgspec.json.Encoder()
GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def sample_events() -> dict[type, AnyTraceEvent]:
    """One event of every trace variant, in seq order, forming a tiny session."""
    request = ModelRequest(
        role="teacher",
        messages=[
            ModelMessage(role="system", content=SYSTEM),
            ModelMessage(role="user", content="teach me halves"),
        ],
        tools=[ToolSpec(name="quiz", description="ask", parameters={"type": "object"})],
    )
    response = ModelMessage(
        role="assistant",
        content="Let's start.",
        tool_calls=[ModelToolCall(id="call_1", name="plan_init", arguments='{"goal":"x"}')],
    )
    events: list[AnyTraceEvent] = [
        MarkEvent(seq=0, scope="chat", mark="chat_created", title="Halves", at=AT, graph_hash="g0"),
        InboundFrameEvent(
            seq=1, scope="learner", turn=0, frame='{"type":"user_message","text":"halves"}'
        ),
        ClockEvent(seq=2, scope="turn:1", value=AT),
        IdEvent(seq=3, scope="turn:1", prefix="msg", value="msg-0001"),
        PromptEvent(
            seq=4,
            scope="turn:1",
            turn=1,
            template_id="teacher.md",
            template_hash="abc",
            graph_context=CONTEXT + "\n",
            system_prompt=SYSTEM,
        ),
        ModelCallEvent(
            seq=5,
            scope="turn:1",
            key="turn:1/teacher#0",
            model="offline",
            request=request,
            request_hash="h1",
            chunks=[
                TimedChunk(t_ms=120.0, text="Let's "),
                TimedChunk(t_ms=180.0, text="start."),
                TimedChunk(t_ms=250.0, tool_index=0, tool_id="call_1", arguments='{"goal":"x"}'),
            ],
            response=response,
            finish_reason="tool_calls",
            usage=Usage(prompt_tokens=10, completion_tokens=5, cost_usd=0.001),
        ),
        ToolRunEvent(
            seq=6,
            scope="turn:1",
            turn=1,
            tool_call_id="call_1",
            tool_name="plan_init",
            raw_args='{"goal":"x"}',
            parsed=True,
            result=PlanOutput(tree=PLAN_1),
            tree_after=PLAN_1,
        ),
        QuizEvent(seq=7, scope="turn:1", turn=1, tool_call_id="call_2", phase="issued"),
        JobTraceEvent(seq=8, scope="job:job-1", job_id="job-1", phase="finished"),
        OutboundFrameEvent(seq=9, scope="turn:1", turn=1, frame='{"type":"turn_finished"}'),
        CheckpointEvent(
            seq=10, scope="turn:1", turn=1, transcript_hash="t1", plan_hash="p1", graph_hash="g0"
        ),
        ExtractionEvent(
            seq=11,
            scope="extraction:run-1",
            run_id="run-1",
            extraction=ExtractorOutput(propositions=[], edges=[], attributions=[]),
            gate_drops=["too vague: 'stuff'"],
            auditor_drops=["unsupported: 'thirds are bigger'"],
            merge_diff="+1 nodes, +0 edges",
            graph_hash_before="g0",
            graph_hash_after="g1",
        ),
    ]
    return {type(e): e for e in events}


EVENTS = list(sample_events().values())
ALL_KINDS = {k for k, _ in rt.KINDS}


def test_every_trace_variant_has_a_sample_a_row_and_a_detail():
    variants = set(get_args(AnyTraceEvent))
    assert set(sample_events()) == variants, "add a sample for the new trace event"
    assert set(rt.ROWS) == variants
    for event in EVENTS:
        item = rt.row(event)
        assert item.label and item.seq == event.seq and item.kind in ALL_KINDS
        found = rd.detail(EVENTS, event.seq)
        assert found is not None and found.title == item.label and found.facts


def test_timeline_is_ordered_by_seq_filtered_by_kind_and_headed_by_scope():
    rows = rt.timeline(list(reversed(EVENTS)), ALL_KINDS)
    assert [r.seq for r in rows] == sorted(e.seq for e in EVENTS)
    heads = [(r.seq, r.scope) for r in rows if r.scope_head]
    assert heads[:3] == [(0, "chat"), (1, "learner"), (2, "turn:1")]
    assert (8, "job:job-1") in heads and (9, "turn:1") in heads  # a scope run resumes
    only_models = rt.timeline(EVENTS, {"model"})
    assert [r.label for r in only_models] == ["turn:1/teacher#0"]
    assert only_models[0].scope_head
    default = {r.kind for r in rt.timeline(EVENTS, rt.DEFAULT_KINDS)}
    assert "outbound" not in default and "sync" not in default and "model" in default


def test_chips_count_every_event_once():
    chips = rt.chips(EVENTS, {"model"})
    assert sum(c.count for c in chips) == len(EVENTS)
    assert [c.key for c in chips if c.active] == ["model"]
    assert {c.key: c.count for c in chips}["sync"] == 2  # the clock and the id


def test_model_call_detail_shows_the_prompt_with_graph_context_split_out():
    found = rd.detail(EVENTS, 5)
    assert found is not None and found.has_prompt
    assert found.prompt_context == CONTEXT
    assert found.prompt_before + found.prompt_context + found.prompt_after == SYSTEM
    titles = [b.title for b in found.blocks]
    assert titles[0] == "#1 user" and "Response text" in titles
    tools = next(b for b in found.blocks if b.title.startswith("Tools offered (1)"))
    assert tools.collapsed and '"quiz"' in tools.text
    call = next(b for b in found.blocks if b.title.startswith("Response tool call plan_init"))
    assert '"goal": "x"' in call.text  # pretty-printed arguments
    facts = {f.label: f.value for f in found.facts}
    assert facts["Key"] == "turn:1/teacher#0"
    assert facts["Chunks"] == "3 (2 text, 1 tool call)"
    assert facts["Chunk timing"] == "first at 120 ms, last at 250 ms"
    assert "$0.0010" in facts["Usage"]


def test_prompt_without_context_is_not_highlighted():
    assert rx_text.split_prompt("plain", "") == ("plain", "", "")
    assert rx_text.split_prompt("plain", "missing block") == ("plain", "", "")


def test_tool_run_detail_has_io_and_the_plan_as_of_then():
    found = rd.detail(EVENTS, 6)
    assert found is not None
    titles = [b.title for b in found.blocks]
    assert titles == ["Raw arguments", "Output", "Plan before", "Plan after"]
    assert [r.title for r in found.plan] == ["Halves"] and found.plan_goal == "Fractions"
    assert found.plan_note == "as of tool run #6"
    before = rd.detail(EVENTS, 5)
    assert before is not None and before.plan == [] and before.plan_note == "no plan yet"


def test_plan_as_of_takes_the_latest_plan_after_before_the_event():
    later = ToolRunEvent(
        seq=20,
        turn=2,
        tool_call_id="c",
        tool_name="plan_add",
        raw_args="{}",
        parsed=True,
        tree_after=PLAN_2,
    )
    events = [*EVENTS, later]
    assert rd.plan_as_of(events, 19) == (PLAN_1, 6)
    assert rd.plan_as_of(events, 20) == (PLAN_2, 20)
    planless = msgspec.structs.replace(later, seq=21, tree_after=None)  # e.g. a quiz
    assert rd.plan_as_of([*events, planless], 30) == (PLAN_2, 20)


def test_extraction_detail_lists_audit_drops_and_graph_hashes():
    found = rd.detail(EVENTS, 11)
    assert found is not None
    facts = {f.label: f.value for f in found.facts}
    assert facts["Graph hash before"] == "g0" and facts["Graph hash after"] == "g1"
    assert facts["Merge"] == "+1 nodes, +0 edges"
    drops = {b.title: b.text for b in found.blocks}
    assert "thirds are bigger" in drops["Audit drops"] and "too vague" in drops["Gate drops"]
    assert {f.label: f.value for f in found.graph}["Graph hash"] == "g1"


def test_failures_are_flagged_and_missing_events_have_no_detail():
    bad = ToolRunEvent(
        seq=30, turn=1, tool_call_id="c", tool_name="quiz", raw_args="{", parsed=False
    )
    assert rt.row(bad).flag == "error"
    assert rd.detail(EVENTS, 999) is None


def test_long_text_is_clipped_with_a_note():
    assert rx_text.clip("x" * 10, 4) == "xxxx\n… (6 more characters)"
    assert rx_text.pretty("not json") == "not json"
    assert rx_text.pretty('{"a":1}') == '{\n  "a": 1\n}'


@pytest.mark.parametrize("golden", sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()))
def test_every_event_of_a_golden_session_projects(golden: str):
    trace = next((GOLDEN / golden / "traces").glob("*.jsonl")).read_bytes()
    events = msgspec.json.Decoder(AnyTraceEvent).decode_lines(trace)
    rows = rt.timeline(events, ALL_KINDS)
    assert len(rows) == len(events)
    for event in events:
        if isinstance(event, (ModelCallEvent, ToolRunEvent, ExtractionEvent, PromptEvent)):
            assert rd.detail(events, event.seq) is not None
    json.dumps(msgspec.to_builtins(rows))  # render vars serialise


def _state() -> ReplayState:
    return substate(ReplayState)


def test_replay_state_filters_and_selects_without_leaking_raw_events():
    state = _state()
    state._show(EVENTS)
    assert state.title == "Halves" and state.problem == ""
    assert {r.kind for r in state.rows} == set(rt.DEFAULT_KINDS) & {
        rt.event_kind(e) for e in EVENTS
    }
    state.toggle_kind("model")
    assert "model" not in {r.kind for r in state.rows}
    state.toggle_kind("model")
    state.select(5)
    assert state.has_detail and state.detail.prompt_context == CONTEXT
    state.select(12345)
    assert not state.has_detail and state.selected_seq == -1
    assert "_events" not in json.dumps(state.dict(), default=str)
    state._show([])
    assert state.problem == "No trace was recorded for this session yet."


def test_replay_path_yields_only_valid_ids():
    assert chat_id_from_replay_path("/replay/chat-0001") == "chat-0001"
    assert chat_id_from_replay_path("/replay/chat-0001/") == "chat-0001"
    assert chat_id_from_replay_path("/replay/../etc") == ""
    assert chat_id_from_replay_path("/chat/chat-0001") == ""


def test_a_session_created_untitled_takes_its_title_from_the_first_message():
    created = MarkEvent(seq=0, scope="chat", mark="chat_created", title=UNTITLED)
    said = InboundFrameEvent(
        seq=1,
        scope="learner",
        turn=0,
        frame='{"type":"user_message","text":"  fractions\\n please"}',
    )
    assert rt.session_title([created, said]) == "fractions please"
    assert rt.session_title([created]) == UNTITLED
    assert rt.session_title(EVENTS) == "Halves"  # a given title stays


def test_quiz_rows_say_what_was_asked_and_how_it_was_graded():
    options = [{"id": "a", "text": "CO2"}, {"id": "b", "text": "Oxygen"}]
    question = {
        "question": {
            "kind": "multiple_choice",
            "prompt": "Which gas?",
            "options": options,
            "correct": "b",
        },
        "node_id": "n1",
    }
    verdict = Verdict(correct=False, expected="b) Oxygen", given="a) CO2", feedback="No.")
    issued = QuizEvent(seq=1, turn=1, tool_call_id="q1", phase="issued", input=question)
    graded = QuizEvent(
        seq=2,
        turn=2,
        tool_call_id="q1",
        phase="graded",
        output=GradedOutput(answer="a", verdict=verdict),
    )
    asked = QuizEvent(
        seq=3, turn=2, tool_call_id="q2", phase="issued", input={"prompt": "Examples?"}
    )
    assert rt.row(issued).sub == "q1 · Which gas?"
    assert rt.row(graded).sub == "q1 · wrong"
    assert rt.row(asked).sub == "q2 · Examples?"
    unreadable = msgspec.structs.replace(graded, output=None, detail="{broken")  # an old trace
    assert rt.row(unreadable).sub == "q1"
    found = rd.detail([issued, graded, asked], 2)
    assert found is not None
    facts = {f.label: f.value for f in found.facts}
    assert facts["Verdict"] == "wrong" and facts["Expected"] == "b) Oxygen"
    assert facts["Given"] == "a) CO2" and facts["Answer"] == "a"
    found = rd.detail([issued, graded, asked], 1)
    assert found is not None
    assert {f.label: f.value for f in found.facts}["Question"] == "Which gas?"


def test_job_facts_follow_the_phase_and_a_failed_job_is_flagged():
    submitted = JobTraceEvent(
        seq=1, scope="turn:1", job_id="job-1", phase="submitted", turn=1, tool_call_id="call_9"
    )
    found = rd.detail([submitted], 1)
    assert found is not None
    facts = {f.label: f.value for f in found.facts}
    assert facts["Submitted in turn"] == "1" and "Delivered into turn" not in facts
    assert facts["Tool call"] == "call_9" and found.blocks == []
    failed = Job(
        id="job-1",
        chat_id="c",
        tool_call_id="call_9",
        kind="research",
        status="failed",
        error="timed out",
        created_at=AT,
    )
    finished = JobTraceEvent(
        seq=2,
        scope="job:job-1",
        job_id="job-1",
        phase="finished",
        job=failed,
    )
    assert rt.row(finished).sub == "job-1 · research · failed"
    assert rt.row(finished).flag == "error"
    found = rd.detail([submitted, finished], 2)
    assert found is not None
    assert {f.label: f.value for f in found.facts}["Status"] == "failed"
    assert [b.title for b in found.blocks] == ["Error", "Job record"]


def test_a_cancelled_model_call_is_flagged_and_its_chunks_are_listed():
    call = sample_events()[ModelCallEvent]
    assert rt.row(call).flag == ""
    cancelled = msgspec.structs.replace(call, cancelled=True, response=None)
    assert rt.row(cancelled).flag == "error" and rt.row(cancelled).sub.endswith("cancelled")
    found = rd.detail([cancelled], cancelled.seq)
    assert found is not None
    assert {f.label: f.value for f in found.facts}["Cancelled"] == "yes, after 3 chunks"
    chunks = next(b for b in found.blocks if b.title.startswith("Streamed chunks (3)"))
    assert chunks.collapsed
    assert chunks.text.splitlines()[0].split() == ["120", "ms", "\"Let's", '"']
    assert 'tool #0 (call_1) "{\\"goal\\":\\"x\\"}"' in chunks.text


def test_loading_another_session_forgets_the_last_one():
    state = _state()
    state._show(EVENTS)
    state.select(5)
    state._reset("chat-2")
    assert (state.total, state.rows, state.title, state.has_detail) == (0, [], "", False)
    assert state.exists and state.chat_id == "chat-2"
    state._reset("")
    assert not state.exists  # no session to link back to


def test_trace_problems_say_what_to_do():
    assert trace_problem("c1", ApiError("x", 404)) == "There is no session “c1”."
    held = trace_problem("c1", ApiError("the API answered 409: …", 409))
    assert "turn is running" in held and "reload" in held
    assert trace_problem("c1", ApiError("cannot reach the API", 0)) == "cannot reach the API"
