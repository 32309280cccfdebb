"""One trace event's detail on the replay page: its facts and long texts (`<pre>` blocks,
never HTML), and the plan and graph as of that event (a model call's is
`replay_model_call`; what the events record is read by `replay_decode`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from shared_contracts.plan import PlanTree
from shared_contracts.tools import GradedOutput, QuizArgs
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
    ToolRunEvent,
)
from ui.model.plan_view import plan_rows
from ui.model.replay_decode import asked, frame_type, issued, question_kind, quiz_outcome
from ui.model.replay_model_call import model_call_detail
from ui.model.replay_parts import Block, EventDetail, Fact, set_prompt
from ui.model.replay_text import as_json, clip, pretty
from ui.model.replay_timeline import ROWS, event_kind, ordered


def _mark_detail(event: MarkEvent, out: EventDetail) -> None:
    out.facts += [Fact("Mark", event.mark), Fact("Turn", str(event.turn))]
    if event.step:
        out.facts.append(Fact("Step", str(event.step)))
    if event.title:
        out.facts.append(Fact("Title", event.title))
    if event.at is not None:
        out.facts.append(Fact("At", event.at.isoformat()))
    if event.graph_hash:
        out.facts.append(Fact("Graph hash", event.graph_hash))
    if event.graph_counts:
        out.facts.append(Fact("Graph counts", _counts(event.graph_counts)))
    if event.config:
        out.blocks.append(Block(title="Config", text=as_json(event.config)))


def _tool_detail(event: ToolRunEvent, out: EventDetail) -> None:
    out.facts += [
        Fact("Tool", event.tool_name),
        Fact("Call id", event.tool_call_id),
        Fact("Turn", str(event.turn)),
        Fact("Arguments parsed", "yes" if event.parsed else "no"),
    ]
    out.blocks.append(Block(title="Raw arguments", text=clip(pretty(event.raw_args))))
    if event.error:
        out.blocks.append(Block(title="Error", text=clip(event.error), error=True))
    if event.result is not None:
        out.blocks.append(Block(title="Output", text=clip(as_json(event.result))))
    elif event.output:  # an older trace's text that did not decode
        out.blocks.append(Block(title="Output", text=clip(pretty(event.output))))
    if event.tree_before is not None or event.tree_after is not None:
        changed = event.tree_before != event.tree_after
        out.facts.append(Fact("Plan changed", "yes" if changed else "no"))
        for title, plan in (("Plan before", event.tree_before), ("Plan after", event.tree_after)):
            text = as_json(plan) if plan is not None else "(none)"
            out.blocks.append(Block(title=title, text=clip(text), collapsed=True))


def _extraction_detail(event: ExtractionEvent, out: EventDetail) -> None:
    out.facts += [
        Fact("Run", event.run_id),
        Fact("Merge", event.merge_diff or "—"),
        Fact("Graph hash before", event.graph_hash_before or "—"),
        Fact("Graph hash after", event.graph_hash_after or "—"),
        Fact("Dropped by the gate", str(len(event.gate_drops))),
        Fact("Dropped by the auditor", str(len(event.auditor_drops))),
    ]
    for title, drops in (("Gate drops", event.gate_drops), ("Audit drops", event.auditor_drops)):
        if drops:
            out.blocks.append(Block(title=title, text=clip("\n".join(drops))))
    if event.extraction is not None:
        out.blocks.append(Block(title="Extractor output", text=clip(as_json(event.extraction))))
    elif event.extractor_output:  # an older trace's text that did not decode
        out.blocks.append(
            Block(title="Extractor output", text=clip(pretty(event.extractor_output)))
        )


def _fill(event: AnyTraceEvent, out: EventDetail, events: Sequence[AnyTraceEvent]) -> None:
    """The type-specific facts and blocks (exhaustive over `AnyTraceEvent`)."""
    match event:
        case MarkEvent():
            _mark_detail(event, out)
        case InboundFrameEvent() | OutboundFrameEvent():
            out.facts += [Fact("Turn", str(event.turn)), Fact("Frame", frame_type(event.frame))]
            out.blocks.append(Block(title="Frame", text=clip(pretty(event.frame))))
        case PromptEvent():
            out.facts += [
                Fact("Turn", str(event.turn)),
                Fact("Template", event.template_id),
                Fact("Template hash", event.template_hash),
                Fact("Graph context", f"{len(event.graph_context)} characters"),
            ]
            set_prompt(out, "System prompt", event.system_prompt, event.graph_context)
        case ModelCallEvent():
            model_call_detail(event, out, events)
        case ToolRunEvent():
            _tool_detail(event, out)
        case QuizEvent():
            out.facts += [
                Fact("Phase", event.phase),
                Fact("Call id", event.tool_call_id),
                Fact("Turn", str(event.turn)),
                *_quiz_facts(event),
            ]
            if event.detail:  # an older trace's text that did not decode
                out.blocks.append(Block(title="Detail", text=clip(pretty(event.detail))))
        case JobTraceEvent():
            _job_detail(event, out)
        case ExtractionEvent():
            _extraction_detail(event, out)
        case ClockEvent():
            out.facts.append(Fact("Value", event.value.isoformat()))
        case IdEvent():
            out.facts += [Fact("Prefix", event.prefix), Fact("Value", event.value)]
        case CheckpointEvent():
            out.facts += [
                Fact("Turn", str(event.turn)),
                Fact("Transcript hash", event.transcript_hash),
                Fact("Plan hash", event.plan_hash),
                Fact("Graph hash", event.graph_hash),
            ]
        case _:
            raise KeyError(type(event))


def _quiz_facts(event: QuizEvent) -> list[Fact]:
    facts: list[Fact] = []
    args = issued(event) if event.phase == "issued" else None
    if isinstance(args, QuizArgs):
        facts.append(Fact("Question kind", question_kind(args.question)))
    if question := asked(event):
        facts.append(Fact("Question", question))
    if isinstance(args, QuizArgs) and args.node_id:
        facts.append(Fact("Plan node", args.node_id))
    output = event.output
    if output is not None:
        facts.append(Fact("Answer", _plain(output.answer)))
        if output.confidence is not None:
            facts.append(Fact("Confidence", f"{output.confidence:.0%}"))
    if isinstance(output, GradedOutput):
        verdict = output.verdict
        facts.append(Fact("Verdict", quiz_outcome(event)))
        facts += [Fact("Given", verdict.given)] if verdict.given else []
        facts += [Fact("Expected", verdict.expected)] if verdict.expected else []
        facts += [Fact("Feedback", verdict.feedback)] if verdict.feedback else []
    return facts


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _job_detail(e: JobTraceEvent, out: EventDetail) -> None:
    out.facts += [Fact("Job", e.job_id), Fact("Phase", e.phase)]
    if e.phase == "delivered":
        out.facts.append(Fact("Delivered into turn", str(e.turn)))
    elif e.turn:
        out.facts.append(Fact("Submitted in turn", str(e.turn)))
    if e.before_call:
        out.facts.append(Fact("Before model call", e.before_call))
    job = e.job
    if job is not None:
        out.facts += [
            Fact("Kind", job.kind),
            Fact("Status", job.status),
            Fact("Tool call", job.tool_call_id),
        ]
        if job.error:
            out.blocks.append(Block(title="Error", text=clip(job.error), error=True))
        out.blocks.append(Block(title="Job record", text=clip(as_json(job))))
    elif e.tool_call_id:
        out.facts.append(Fact("Tool call", e.tool_call_id))
    elif e.detail:  # an older trace's text that did not decode
        out.blocks.append(Block(title="Detail", text=clip(pretty(e.detail))))


def _counts(counts: dict[str, int]) -> str:
    return " · ".join(f"{k} {v}" for k, v in counts.items())


def plan_as_of(events: Sequence[AnyTraceEvent], seq: int) -> tuple[PlanTree | None, int]:
    """The plan tree after the latest tool run at or before `seq`, and that run's seq (-1)."""
    found: tuple[PlanTree | None, int] = (None, -1)
    for event in events:
        if event.seq > seq:
            break
        if isinstance(event, ToolRunEvent) and event.tree_after is not None:
            found = (event.tree_after, event.seq)
    return found


def graph_as_of(events: Sequence[AnyTraceEvent], seq: int) -> list[Fact]:
    """The graph's hash (and ledger counts) as last recorded at or before `seq`."""
    graph_hash, source, counts = "", "", ""
    for event in events:
        if event.seq > seq:
            break
        if isinstance(event, MarkEvent) and event.graph_hash:
            graph_hash, source = event.graph_hash, f"{event.mark} #{event.seq}"
            counts = _counts(event.graph_counts) if event.graph_counts else counts
        elif isinstance(event, ExtractionEvent) and event.graph_hash_after:
            graph_hash, source = event.graph_hash_after, f"extraction #{event.seq}"
        elif isinstance(event, CheckpointEvent) and event.graph_hash:
            graph_hash, source = event.graph_hash, f"checkpoint #{event.seq}"
    if not graph_hash:
        return []
    facts = [Fact("Graph hash", graph_hash), Fact("Recorded at", source)]
    if counts:
        facts.append(Fact("Ledger counts", counts))
    return facts


def detail(events: Sequence[AnyTraceEvent], seq: int) -> EventDetail | None:
    """Everything the right-hand panel shows for the event `seq` (None when absent)."""
    events = ordered(events)
    event = next((e for e in events if e.seq == seq), None)
    if event is None:
        return None
    label, _, _ = ROWS[type(event)](event)
    out = EventDetail(seq=event.seq, kind=event_kind(event), title=label, scope=event.scope)
    _fill(event, out, events)
    plan, plan_seq = plan_as_of(events, seq)
    if plan is not None:
        out.plan_goal, out.plan = plan.goal, plan_rows(plan)
        out.plan_note = f"as of tool run #{plan_seq}"
    else:
        out.plan_note = "no plan yet"
    out.graph = graph_as_of(events, seq)
    return out
