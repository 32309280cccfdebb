"""Reading the JSON a trace event carries in a string field: the one place the replay page
decodes recorded text. The Structs here mirror what the server wrote (a quiz event's
`detail`, a finished job's record, a plan tree); they are loose, so an unknown shape
reads as empty. When the trace schema types these fields, this module is what changes.
"""

from __future__ import annotations

from typing import Any

import msgspec

from shared_contracts.frames import ClientFrame
from shared_contracts.jobs import Job
from shared_contracts.plan import PlanTree


class _Tagged(msgspec.Struct):
    """Just the tag of a recorded frame (every frame contract is tagged on `type`)."""

    type: str = "?"


class RecordedVerdict(msgspec.Struct):
    correct: bool | None = None
    expected: Any = None
    given: Any = None
    feedback: str = ""


class RecordedQuestion(msgspec.Struct):
    kind: str = ""
    prompt: str = ""


class QuizDetail(msgspec.Struct):
    """What a quiz event's `detail` JSON holds: the question when issued, the answer (and
    the verdict of a graded quiz) when answered. Loose: an unknown shape reads as empty."""

    kind: str = ""
    answer: Any = None
    confidence: float | None = None
    verdict: RecordedVerdict | None = None
    question: RecordedQuestion | None = None
    prompt: str = ""
    """An `ask_user_question`'s prompt (a quiz's is in `question`)."""
    node_id: str | None = None

    @property
    def asked(self) -> str:
        return self.question.prompt if self.question is not None else self.prompt


_TAG = msgspec.json.Decoder(_Tagged)
_CLIENT_FRAME = msgspec.json.Decoder(ClientFrame)
QUIZ_DETAIL = msgspec.json.Decoder(QuizDetail)
_JOB = msgspec.json.Decoder(Job)


def quiz_detail(detail: str) -> QuizDetail:
    """A quiz event's detail, decoded loosely (empty when it is not the expected JSON)."""
    try:
        return QUIZ_DETAIL.decode(detail) if detail else QuizDetail()
    except msgspec.DecodeError:
        return QuizDetail()


def quiz_outcome(detail: QuizDetail) -> str:
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


def client_frame(text: str) -> ClientFrame | None:
    """A recorded learner frame, or None when it is not one."""
    try:
        return _CLIENT_FRAME.decode(text)
    except msgspec.DecodeError:
        return None


def decode_plan(text: str) -> PlanTree | None:
    """A recorded plan tree (JSON), or None when absent or unreadable."""
    if not text:
        return None
    try:
        return msgspec.json.decode(text, type=PlanTree)
    except msgspec.DecodeError:
        return None
