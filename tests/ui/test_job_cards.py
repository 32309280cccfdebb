"""A job card says how its job ended: a request the server refused (a model's malformed
arguments) or a job that failed shows "failed" and a sentence, never a "pending…" spinner."""

from __future__ import annotations

import pytest

from shared_contracts.chat import ToolPart
from shared_contracts.frames import JobFrame, ToolCall, ToolResult
from shared_contracts.jobs import Job
from tests.ui.samples import AT
from ui.model.conversation import chat_items, failed_request
from ui.model.room import Room, apply_frames

SENTENCE = "The tutor's diagram request was malformed and was skipped."


def _part(tool: str, state: str = "input-available", **fields) -> ToolPart:
    return ToolPart(tool_call_id="call_j1", tool_name=tool, state=state, input={}, **fields)


@pytest.mark.parametrize("tool", ["visual", "research", "demo"])
def test_a_refused_request_shows_failed_with_the_servers_sentence(tool: str):
    room = apply_frames(
        Room(),
        [
            ToolCall(message_id="m1", part=_part(tool)),
            ToolResult(part=_part(tool, "output-error", error=SENTENCE)),
        ],
    )
    (card,) = chat_items(room)
    assert (card.kind, card.status, card.failed, card.running) == ("job", "failed", True, False)
    assert card.error == SENTENCE


def test_a_refused_request_without_a_sentence_gets_one():
    room = apply_frames(Room(), [ToolCall(message_id="m1", part=_part("visual", "output-error"))])
    (card,) = chat_items(room)
    assert card.failed and card.error == failed_request("visual")
    assert card.error == "The tutor's diagram request could not be carried out and was skipped."


def test_a_request_still_waiting_for_its_job_is_pending():
    (card,) = chat_items(apply_frames(Room(), [ToolCall(message_id="m1", part=_part("visual"))]))
    assert card.running and not card.failed and card.status == "pending"


def test_a_job_that_failed_says_so():
    job = Job(
        id="job-1",
        chat_id="chat-1",
        tool_call_id="call_j1",
        kind="visual",
        status="failed",
        created_at=AT,
        error="The diagram took too long and was stopped.",
    )
    part = _part("visual", job_id="job-1")
    room = apply_frames(Room(), [ToolCall(message_id="m1", part=part), JobFrame(job=job)])
    (card,) = chat_items(room)
    assert card.failed and not card.running
    assert card.error == "The diagram took too long and was stopped."
