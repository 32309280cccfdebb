"""Trace events as written before their fields were typed, read into today's form.

Older recorders wrote some values as JSON text in a string field (`QuizEvent.detail`,
`JobTraceEvent.detail`, `ToolRunEvent.output` / `plan_before` / `plan_after`,
`ExtractionEvent.extractor_output`); `typed_event` decodes each into its typed field and
empties the old one, so such an event equals the one today's recorder writes. A value
that does not decode stays where it was (a reader still has it as text).
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from shared_contracts.extraction import ExtractorOutput
from shared_contracts.jobs import Job
from shared_contracts.plan import PlanTree
from shared_contracts.tools import GradedOutput, ReplyOutput, ToolOutput
from shared_contracts.trace import (
    AnyTraceEvent,
    ExtractionEvent,
    JobTraceEvent,
    QuizEvent,
    ToolRunEvent,
)

T = TypeVar("T")
_ANSWER = msgspec.json.Decoder(GradedOutput | ReplyOutput)
_INPUT = msgspec.json.Decoder(dict[str, Any])
_JOB = msgspec.json.Decoder(Job)
_OUTPUT = msgspec.json.Decoder(ToolOutput)
_TREE = msgspec.json.Decoder(PlanTree)
_EXTRACTION = msgspec.json.Decoder(ExtractorOutput)


def typed_event(event: AnyTraceEvent) -> AnyTraceEvent:
    """`event` with any value an older recorder wrote as JSON text in its typed field."""
    if isinstance(event, QuizEvent) and event.detail:
        return _quiz(event)
    if isinstance(event, JobTraceEvent) and event.detail:
        return _job(event)
    if isinstance(event, ToolRunEvent) and (event.output or event.plan_before or event.plan_after):
        return _tool_run(event)
    if isinstance(event, ExtractionEvent) and event.extractor_output:
        extraction = _decoded(_EXTRACTION, event.extractor_output)
        if extraction is not None:
            return msgspec.structs.replace(event, extractor_output="", extraction=extraction)
    return event


def _quiz(event: QuizEvent) -> QuizEvent:
    if event.phase == "issued":
        value = _decoded(_INPUT, event.detail)
        return event if value is None else msgspec.structs.replace(event, detail="", input=value)
    answer = _decoded(_ANSWER, event.detail)
    return event if answer is None else msgspec.structs.replace(event, detail="", output=answer)


def _job(event: JobTraceEvent) -> JobTraceEvent:
    if event.phase != "finished":
        return msgspec.structs.replace(event, detail="", tool_call_id=event.detail)
    job = _decoded(_JOB, event.detail)
    return event if job is None else msgspec.structs.replace(event, detail="", job=job)


def _tool_run(event: ToolRunEvent) -> ToolRunEvent:
    changes: dict[str, Any] = {}
    result = _decoded(_OUTPUT, event.output) if event.output else None
    if result is not None:
        changes.update(output="", result=result)
    before = _decoded(_TREE, event.plan_before) if event.plan_before else None
    if before is not None:
        changes.update(plan_before="", tree_before=before)
    after = _decoded(_TREE, event.plan_after) if event.plan_after else None
    if after is not None:
        changes.update(plan_after="", tree_after=after)
    return msgspec.structs.replace(event, **changes) if changes else event


def _decoded(decoder: msgspec.json.Decoder[T], text: str) -> T | None:
    try:
        return decoder.decode(text)
    except msgspec.DecodeError:
        return None
