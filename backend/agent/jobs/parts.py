"""Settling a job's tool part in a chat record (pure: used inside `ChatStore.update`)."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from shared_contracts.chat import ChatRecord, Message, Part, ToolPart
from shared_contracts.jobs import Job
from shared_contracts.tools import JOB_TOOLS, JobOutput

OPEN_STATES = frozenset({"input-streaming", "input-available"})


def is_open_job_part(part: Part) -> bool:
    """A research/demo/visual tool part still waiting for its job."""
    return isinstance(part, ToolPart) and part.tool_name in JOB_TOOLS and part.state in OPEN_STATES


def settled(part: ToolPart, job: Job) -> ToolPart:
    """`part` carrying `job`'s outcome: output-available when done, else output-error."""
    output = JobOutput(job_id=job.id, status=job.status, result=job.result, error=job.error)
    if job.status == "done":
        return msgspec.structs.replace(
            part, state="output-available", output=output, error="", job_id=job.id
        )
    return msgspec.structs.replace(
        part, state="output-error", output=output, error=job.error or job.status, job_id=job.id
    )


def map_parts(record: ChatRecord, change: Callable[[ToolPart], ToolPart | None]) -> ChatRecord:
    """`record` with each tool part replaced by `change(part)` when that is not None."""
    messages: list[Message] = []
    touched = False
    for message in record.messages:
        parts: list[Part] = []
        here = False
        for part in message.parts:
            new = change(part) if isinstance(part, ToolPart) else None
            here |= new is not None
            parts.append(part if new is None else new)
        touched |= here
        messages.append(msgspec.structs.replace(message, parts=parts) if here else message)
    return msgspec.structs.replace(record, messages=messages) if touched else record


def settle_job(record: ChatRecord, job: Job) -> ChatRecord:
    """`record` with the tool part of `job` (matched by tool-call id) settled."""

    def change(part: ToolPart) -> ToolPart | None:
        mine = part.tool_call_id == job.tool_call_id and part.tool_name in JOB_TOOLS
        return settled(part, job) if mine and part.job_id in (None, job.id) else None

    return map_parts(record, change)


def attach_job(record: ChatRecord, job: Job) -> ChatRecord:
    """`record` with `job.id` set on its still-open tool part (state unchanged)."""

    def change(part: ToolPart) -> ToolPart | None:
        mine = part.tool_call_id == job.tool_call_id and is_open_job_part(part)
        return msgspec.structs.replace(part, job_id=job.id) if mine and not part.job_id else None

    return map_parts(record, change)
