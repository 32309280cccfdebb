"""Trace events → the replay page's timeline rows and the selected event's detail (pure).

Every `AnyTraceEvent` variant has a row and a detail builder (`ROWS`, `DETAILS`); long text
stays text (the page shows it in `<pre>` blocks, never as HTML).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Collection, Sequence
from typing import Any

import msgspec

from shared_contracts.chat import UNTITLED, title_from
from shared_contracts.frames import Answer, ClientFrame, UserMessage
from shared_contracts.jobs import Job
from shared_contracts.model_io import ModelMessage
from shared_contracts.plan import PlanTree
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
from ui.render import PlanRow, plan_rows

KINDS: tuple[tuple[str, str], ...] = (
    ("turn", "Turns"),
    ("prompt", "Prompts"),
    ("model", "Model calls"),
    ("tool", "Tools"),
    ("quiz", "Quizzes"),
    ("job", "Jobs"),
    ("extraction", "Extraction"),
    ("inbound", "Learner frames"),
    ("outbound", "Server frames"),
    ("checkpoint", "Checkpoints"),
    ("sync", "Clock, ids, reads"),
)
DEFAULT_KINDS = frozenset(k for k, _ in KINDS) - {"outbound", "sync"}
"""Shown at first: server frames (mostly token deltas) and sync points are noise until asked."""
MAX_TEXT = 60_000
LABEL_CHARS = 90
OPEN_MESSAGES = 3
"""A request's last messages start unfolded; older ones are folded."""
TURN_MARKS = frozenset({"chat_created", "turn_started", "step"})


@dataclasses.dataclass
class TimelineRow:
    seq: int = 0
    kind: str = ""
    label: str = ""
    sub: str = ""
    scope: str = ""
    scope_head: bool = False
    """True on the first shown row of a run of one scope (the page prints the scope there)."""
    flag: str = ""
    """"error" when the event records a failure."""


@dataclasses.dataclass
class KindChip:
    key: str = ""
    label: str = ""
    count: int = 0
    active: bool = False


@dataclasses.dataclass
class Fact:
    label: str = ""
    value: str = ""


@dataclasses.dataclass
class Block:
    """One long text, shown in a scrollable `<pre>`; `collapsed` ones start folded."""

    title: str = ""
    text: str = ""
    collapsed: bool = False
    error: bool = False


@dataclasses.dataclass
class EventDetail:
    seq: int = -1
    kind: str = ""
    title: str = ""
    scope: str = ""
    facts: list[Fact] = dataclasses.field(default_factory=list)
    has_prompt: bool = False
    prompt_title: str = ""
    prompt_before: str = ""
    prompt_context: str = ""
    prompt_after: str = ""
    blocks: list[Block] = dataclasses.field(default_factory=list)
    plan_goal: str = ""
    plan: list[PlanRow] = dataclasses.field(default_factory=list)
    plan_note: str = ""
    graph: list[Fact] = dataclasses.field(default_factory=list)


# --- small text helpers ----------------------------------------------------------------


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """`text`, cut at `limit` characters with a note saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters)"


def one_line(text: str, limit: int = LABEL_CHARS) -> str:
    """The first line-ish of `text`, whitespace collapsed, for a timeline label."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def pretty(text: str) -> str:
    """JSON text re-indented for reading (formatted, never decoded); anything else unchanged."""
    try:
        return msgspec.json.format(text, indent=2)
    except (msgspec.DecodeError, TypeError):
        return text


def _json(value: Any) -> str:
    return json.dumps(msgspec.to_builtins(value), indent=2, ensure_ascii=False)


class _Tagged(msgspec.Struct):
    """Just the tag of a recorded frame (every frame contract is tagged on `type`)."""

    type: str = "?"


class _Verdict(msgspec.Struct):
    correct: bool | None = None
    expected: Any = None
    given: Any = None
    feedback: str = ""


class _Question(msgspec.Struct):
    kind: str = ""
    prompt: str = ""


class _QuizDetail(msgspec.Struct):
    """What a quiz event's `detail` JSON holds: the question when issued, the answer (and
    the verdict of a graded quiz) when answered. Loose: an unknown shape reads as empty."""

    kind: str = ""
    answer: Any = None
    confidence: float | None = None
    verdict: _Verdict | None = None
    question: _Question | None = None
    prompt: str = ""
    """An `ask_user_question`'s prompt (a quiz's is in `question`)."""
    node_id: str | None = None

    @property
    def asked(self) -> str:
        return self.question.prompt if self.question is not None else self.prompt


_TAG = msgspec.json.Decoder(_Tagged)
_CLIENT_FRAME = msgspec.json.Decoder(ClientFrame)
_QUIZ_DETAIL = msgspec.json.Decoder(_QuizDetail)
_JOB = msgspec.json.Decoder(Job)


def quiz_detail(detail: str) -> _QuizDetail:
    """A quiz event's detail, decoded loosely (empty when it is not the expected JSON)."""
    try:
        return _QUIZ_DETAIL.decode(detail) if detail else _QuizDetail()
    except msgspec.DecodeError:
        return _QuizDetail()


def quiz_outcome(detail: _QuizDetail) -> str:
    """ "right" / "wrong" for a graded quiz, "reply" for an answered question, else ""."""
    if detail.verdict is not None and detail.verdict.correct is not None:
        return "right" if detail.verdict.correct else "wrong"
    return "reply" if detail.kind == "reply" else ""


def finished_job(detail: str) -> Job | None:
    """The job record a `finished` job event carries (None when absent or unreadable)."""
    try:
        return _JOB.decode(detail) if detail else None
    except msgspec.DecodeError:
        return None


def frame_type(frame: str) -> str:
    """The `type` of a recorded JSON frame ("?" when it is not one)."""
    try:
        return _TAG.decode(frame).type
    except msgspec.DecodeError:
        return "?"


def split_prompt(system_prompt: str, graph_context: str) -> tuple[str, str, str]:
    """(before, graph context, after): the context block as it appears in the prompt."""
    block = graph_context.strip()
    at = system_prompt.find(block) if block else -1
    if at < 0:
        return system_prompt, "", ""
    return system_prompt[:at], block, system_prompt[at + len(block) :]


def decode_plan(text: str) -> PlanTree | None:
    """A recorded plan tree (JSON), or None when absent or unreadable."""
    if not text:
        return None
    try:
        return msgspec.json.decode(text, type=PlanTree)
    except msgspec.DecodeError:
        return None


# --- timeline rows -----------------------------------------------------------------------


def event_kind(event: AnyTraceEvent) -> str:
    """The filter chip an event belongs to (one of `KINDS`)."""
    if isinstance(event, MarkEvent):
        return "turn" if event.mark in TURN_MARKS else "sync"
    return KIND_OF[type(event)]


KIND_OF: dict[type, str] = {
    InboundFrameEvent: "inbound",
    OutboundFrameEvent: "outbound",
    PromptEvent: "prompt",
    ModelCallEvent: "model",
    ToolRunEvent: "tool",
    QuizEvent: "quiz",
    JobTraceEvent: "job",
    ExtractionEvent: "extraction",
    ClockEvent: "sync",
    IdEvent: "sync",
    CheckpointEvent: "checkpoint",
}


def _mark_row(e: MarkEvent) -> tuple[str, str, str]:
    if e.mark == "chat_created":
        return f"Session created: {one_line(e.title)}", "", ""
    if e.mark == "turn_started":
        return f"Turn {e.turn} started", "", ""
    if e.mark == "step":
        return f"Teacher step {e.step}", f"turn {e.turn}", ""
    return f"{e.mark.replace('_', ' ')}", e.graph_hash[:12], ""


def _inbound_row(e: InboundFrameEvent) -> tuple[str, str, str]:
    text = ""
    try:
        frame = _CLIENT_FRAME.decode(e.frame)
    except msgspec.DecodeError:
        frame = None
    if isinstance(frame, UserMessage):
        text = frame.text
    elif isinstance(frame, Answer):
        text = str(frame.answer)
    return f"Learner: {frame_type(e.frame)}", one_line(text), ""


def _model_row(e: ModelCallEvent) -> tuple[str, str, str]:
    calls = len(e.response.tool_calls) if e.response else 0
    sub = f"{e.model} · {calls} tool call{'s' if calls != 1 else ''}"
    if e.finish_reason:
        sub += f" · {e.finish_reason}"
    if e.cancelled:
        sub += " · cancelled"
    return e.key, sub, "error" if e.error or e.cancelled else ""


def _tool_row(e: ToolRunEvent) -> tuple[str, str, str]:
    failed = bool(e.error) or not e.parsed
    return f"Tool {e.tool_name}", e.tool_call_id, "error" if failed else ""


def _quiz_row(e: QuizEvent) -> tuple[str, str, str]:
    detail = quiz_detail(e.detail)
    sub = e.tool_call_id
    if e.phase == "issued" and detail.asked:
        sub += f" · {one_line(detail.asked, 60)}"
    elif outcome := quiz_outcome(detail):
        sub += f" · {outcome}"
    return f"Quiz {e.phase}", sub, ""


def _job_row(e: JobTraceEvent) -> tuple[str, str, str]:
    sub, flag = e.job_id, ""
    if e.phase == "finished" and (job := finished_job(e.detail)) is not None:
        sub += f" · {job.kind} · {job.status}"
        flag = "error" if job.status == "failed" else ""
    elif e.before_call:
        sub += f" · before {e.before_call}"
    return f"Job {e.phase}", sub, flag


def _extraction_row(e: ExtractionEvent) -> tuple[str, str, str]:
    drops = len(e.gate_drops) + len(e.auditor_drops)
    sub = e.merge_diff or "no merge"
    if drops:
        sub += f" · {drops} dropped"
    return f"Extraction {e.run_id}", one_line(sub), ""


ROWS: dict[type, Callable[[Any], tuple[str, str, str]]] = {
    MarkEvent: _mark_row,
    InboundFrameEvent: _inbound_row,
    OutboundFrameEvent: lambda e: (f"Server: {frame_type(e.frame)}", f"turn {e.turn}", ""),
    PromptEvent: lambda e: (
        f"Prompt {e.template_id}",
        f"{e.template_hash} · graph context {len(e.graph_context)} chars",
        "",
    ),
    ModelCallEvent: _model_row,
    ToolRunEvent: _tool_row,
    QuizEvent: _quiz_row,
    JobTraceEvent: _job_row,
    ExtractionEvent: _extraction_row,
    ClockEvent: lambda e: ("Clock", e.value.isoformat(), ""),
    IdEvent: lambda e: (f"Id {e.prefix}", e.value, ""),
    CheckpointEvent: lambda e: (f"Checkpoint turn {e.turn}", e.transcript_hash[:12], ""),
}
"""One row builder per trace event type: (label, secondary text, flag)."""


def row(event: AnyTraceEvent) -> TimelineRow:
    """The timeline row of one event (KeyError for a type without a builder)."""
    label, sub, flag = ROWS[type(event)](event)
    return TimelineRow(
        seq=event.seq, kind=event_kind(event), label=label, sub=sub, scope=event.scope, flag=flag
    )


def ordered(events: Sequence[AnyTraceEvent]) -> list[AnyTraceEvent]:
    """Events by `seq` (the one writer's order)."""
    return sorted(events, key=lambda e: e.seq)


def timeline(events: Sequence[AnyTraceEvent], kinds: Collection[str]) -> list[TimelineRow]:
    """Rows of the events whose kind is in `kinds`, by seq; a scope heads each run of it."""
    rows: list[TimelineRow] = []
    scope = None
    for event in ordered(events):
        if event_kind(event) not in kinds:
            continue
        item = row(event)
        item.scope_head = item.scope != scope
        scope = item.scope
        rows.append(item)
    return rows


def chips(events: Sequence[AnyTraceEvent], kinds: Collection[str]) -> list[KindChip]:
    """One filter chip per kind, with how many events it holds and whether it is on."""
    tally = dict.fromkeys((k for k, _ in KINDS), 0)
    for event in events:
        tally[event_kind(event)] += 1
    return [KindChip(key=k, label=label, count=tally[k], active=k in kinds) for k, label in KINDS]


def session_title(events: Sequence[AnyTraceEvent]) -> str:
    """The session's title: the one it was created with, or (created untitled) the one the
    server gave it from the learner's first message — the trace records no rename."""
    created = next(
        (e.title for e in events if isinstance(e, MarkEvent) and e.mark == "chat_created"), ""
    )
    if created and created != UNTITLED:
        return created
    for event in events:
        if isinstance(event, InboundFrameEvent):
            try:
                frame = _CLIENT_FRAME.decode(event.frame)
            except msgspec.DecodeError:
                continue
            if isinstance(frame, UserMessage) and frame.text.strip():
                return title_from(frame.text)
    return created


# --- details ------------------------------------------------------------------------------


def _message_block(message: ModelMessage, index: int) -> Block:
    title = f"#{index} {message.role}"
    if message.tool_call_id:
        title += f" (result of {message.tool_call_id})"
    text = message.content
    for call in message.tool_calls:
        text += f"\n\n→ {call.name} ({call.id})\n{pretty(call.arguments)}"
    return Block(title=title, text=clip(text.strip()))


def _chunk_facts(e: ModelCallEvent) -> list[Fact]:
    chunks = e.chunks
    text_chunks = sum(1 for c in chunks if c.text)
    tool_chunks = sum(1 for c in chunks if c.tool_index is not None)
    facts = [Fact("Chunks", f"{len(chunks)} ({text_chunks} text, {tool_chunks} tool call)")]
    if chunks:
        first, last = chunks[0].t_ms, chunks[-1].t_ms
        facts.append(Fact("Chunk timing", f"first at {first:.0f} ms, last at {last:.0f} ms"))
        facts.append(Fact("Streamed for", f"{max(0.0, last - first):.0f} ms"))
    return facts


def _chunk_line(chunk: TimedChunk) -> str:
    at = f"{chunk.t_ms:8.0f} ms  "
    if chunk.tool_index is None:
        return at + json.dumps(chunk.text, ensure_ascii=False)
    name = f" {chunk.tool_name}" if chunk.tool_name else ""
    ident = f" ({chunk.tool_id})" if chunk.tool_id else ""
    return at + f"tool #{chunk.tool_index}{name}{ident} {json.dumps(chunk.arguments)}"


def _model_detail(e: ModelCallEvent, out: EventDetail, prompt: PromptEvent | None) -> None:
    request = e.request
    usage = e.usage
    out.facts += [
        Fact("Key", e.key),
        Fact("Model", e.model),
        Fact("Role", request.role),
        Fact("Request hash", e.request_hash),
        Fact("Finish", e.finish_reason or "—"),
        Fact(
            "Usage",
            f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens, "
            f"${usage.cost_usd:.4f}",
        ),
        *_chunk_facts(e),
    ]
    if request.temperature is not None:
        out.facts.append(Fact("Temperature", str(request.temperature)))
    if e.cancelled:
        out.facts.append(Fact("Cancelled", f"yes, after {len(e.chunks)} chunks"))
    messages = list(request.messages)
    if messages and messages[0].role == "system":
        context = prompt.graph_context if prompt is not None else ""
        _set_prompt(out, "System prompt", messages[0].content, context)
        messages = messages[1:]
    for index, message in enumerate(messages, start=1):
        block = _message_block(message, index)
        block.collapsed = index <= len(messages) - OPEN_MESSAGES
        out.blocks.append(block)
    if request.tools:
        names = ", ".join(t.name for t in request.tools)
        out.blocks.append(
            Block(
                title=f"Tools offered ({len(request.tools)}): {one_line(names, 120)}",
                text=clip(_json(request.tools)),
                collapsed=True,
            )
        )
    if request.response_schema is not None:
        out.blocks.append(
            Block(
                title="Response schema", text=clip(_json(request.response_schema)), collapsed=True
            )
        )
    if e.error:
        out.blocks.append(Block(title="Error", text=clip(e.error), error=True))
    response = e.response
    assembled = response.content if response else "".join(c.text for c in e.chunks)
    out.blocks.append(Block(title="Response text", text=clip(assembled) or "(no text)"))
    for call in response.tool_calls if response else []:
        out.blocks.append(
            Block(
                title=f"Response tool call {call.name} ({call.id})",
                text=clip(pretty(call.arguments)),
            )
        )
    if e.chunks:
        out.blocks.append(
            Block(
                title=f"Streamed chunks ({len(e.chunks)}), as they arrived",
                text=clip("\n".join(_chunk_line(c) for c in e.chunks)),
                collapsed=True,
            )
        )


def _set_prompt(out: EventDetail, title: str, text: str, context: str) -> None:
    before, block, after = split_prompt(text, context)
    out.has_prompt, out.prompt_title = True, title
    out.prompt_before, out.prompt_context, out.prompt_after = (
        clip(before),
        clip(block),
        clip(after),
    )


def _prompt_for(events: Sequence[AnyTraceEvent], e: ModelCallEvent) -> PromptEvent | None:
    """The latest prompt rendered in the call's scope before it (its graph context)."""
    found = None
    for event in events:
        if event.seq >= e.seq:
            break
        if isinstance(event, PromptEvent) and event.scope == e.scope:
            found = event
    return found


def _fill(event: AnyTraceEvent, out: EventDetail, events: Sequence[AnyTraceEvent]) -> None:
    """The type-specific facts and blocks (exhaustive over `AnyTraceEvent`)."""
    match event:
        case MarkEvent():
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
                out.blocks.append(Block(title="Config", text=_json(event.config)))
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
            _set_prompt(out, "System prompt", event.system_prompt, event.graph_context)
        case ModelCallEvent():
            _model_detail(event, out, _prompt_for(events, event))
        case ToolRunEvent():
            out.facts += [
                Fact("Tool", event.tool_name),
                Fact("Call id", event.tool_call_id),
                Fact("Turn", str(event.turn)),
                Fact("Arguments parsed", "yes" if event.parsed else "no"),
            ]
            out.blocks.append(Block(title="Raw arguments", text=clip(pretty(event.raw_args))))
            if event.error:
                out.blocks.append(Block(title="Error", text=clip(event.error), error=True))
            if event.output:
                out.blocks.append(Block(title="Output", text=clip(pretty(event.output))))
            if event.plan_before or event.plan_after:
                changed = event.plan_before != event.plan_after
                out.facts.append(Fact("Plan changed", "yes" if changed else "no"))
                out.blocks.append(
                    Block(title="Plan before", text=clip(pretty(event.plan_before)), collapsed=True)
                )
                out.blocks.append(
                    Block(title="Plan after", text=clip(pretty(event.plan_after)), collapsed=True)
                )
        case QuizEvent():
            out.facts += [
                Fact("Phase", event.phase),
                Fact("Call id", event.tool_call_id),
                Fact("Turn", str(event.turn)),
                *_quiz_facts(quiz_detail(event.detail)),
            ]
            if event.detail:
                out.blocks.append(Block(title="Detail", text=clip(pretty(event.detail))))
        case JobTraceEvent():
            _job_detail(event, out)
        case ExtractionEvent():
            out.facts += [
                Fact("Run", event.run_id),
                Fact("Merge", event.merge_diff or "—"),
                Fact("Graph hash before", event.graph_hash_before or "—"),
                Fact("Graph hash after", event.graph_hash_after or "—"),
                Fact("Dropped by the gate", str(len(event.gate_drops))),
                Fact("Dropped by the auditor", str(len(event.auditor_drops))),
            ]
            for title, drops in (
                ("Gate drops", event.gate_drops),
                ("Audit drops", event.auditor_drops),
            ):
                if drops:
                    out.blocks.append(Block(title=title, text=clip("\n".join(drops))))
            out.blocks.append(
                Block(title="Extractor output", text=clip(pretty(event.extractor_output)))
            )
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


def _quiz_facts(detail: _QuizDetail) -> list[Fact]:
    facts: list[Fact] = []
    if detail.question is not None:
        facts.append(Fact("Question kind", detail.question.kind or "—"))
    if detail.asked:
        facts.append(Fact("Question", detail.asked))
    if detail.node_id:
        facts.append(Fact("Plan node", detail.node_id))
    if detail.answer is not None:
        facts.append(Fact("Answer", _plain(detail.answer)))
    if detail.confidence is not None:
        facts.append(Fact("Confidence", f"{detail.confidence:.0%}"))
    if (verdict := detail.verdict) is not None:
        facts.append(Fact("Verdict", quiz_outcome(detail) or "—"))
        facts += [Fact("Given", _plain(verdict.given))] if verdict.given is not None else []
        facts += [Fact("Expected", _plain(verdict.expected))] if verdict.expected else []
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
    job = finished_job(e.detail) if e.phase == "finished" else None
    if job is not None:
        out.facts += [
            Fact("Kind", job.kind),
            Fact("Status", job.status),
            Fact("Tool call", job.tool_call_id),
        ]
        if job.error:
            out.blocks.append(Block(title="Error", text=clip(job.error), error=True))
        out.blocks.append(Block(title="Job record", text=clip(pretty(e.detail))))
    elif e.phase in ("submitted", "delivered") and e.detail:
        out.facts.append(Fact("Tool call", e.detail))  # these phases record the call's id
    elif e.detail:
        out.blocks.append(Block(title="Detail", text=clip(pretty(e.detail))))


def _counts(counts: dict[str, int]) -> str:
    return " · ".join(f"{k} {v}" for k, v in counts.items())


def plan_as_of(events: Sequence[AnyTraceEvent], seq: int) -> tuple[PlanTree | None, int]:
    """The plan tree after the latest tool run at or before `seq`, and that run's seq (-1)."""
    found: tuple[PlanTree | None, int] = (None, -1)
    for event in events:
        if event.seq > seq:
            break
        if isinstance(event, ToolRunEvent) and event.plan_after:
            plan = decode_plan(event.plan_after)
            if plan is not None:
                found = (plan, event.seq)
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
