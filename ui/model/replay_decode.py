"""Reading what a trace event records, on shared_contracts' own types: an issued question's
arguments, an answer's outcome, a recorded frame's type (frames are kept as the text sent
or received, which may not even be JSON)."""

from __future__ import annotations

import msgspec

from shared_contracts.frames import ClientFrame
from shared_contracts.questions import QuestionSpec
from shared_contracts.tools import AskUserArgs, GradedOutput, QuizArgs, ReplyOutput
from shared_contracts.trace import QuizEvent


class _Tagged(msgspec.Struct):
    """Just the tag of a recorded frame (every frame contract is tagged on `type`)."""

    type: str = "?"


_TAG = msgspec.json.Decoder(_Tagged)
_CLIENT_FRAME = msgspec.json.Decoder(ClientFrame)


def issued(event: QuizEvent) -> QuizArgs | AskUserArgs | None:
    """An issued question's arguments (a quiz's, key included, or a free-form question's);
    None for an answer, or arguments of neither shape."""
    for kind in (QuizArgs, AskUserArgs):
        try:
            return msgspec.convert(event.input, kind)
        except msgspec.ValidationError:
            continue
    return None


def question_kind(spec: QuestionSpec) -> str:
    """A quiz question's kind (`multiple_choice`, `short_answer`, `numeric`)."""
    return str(type(spec).__struct_config__.tag)


def asked(event: QuizEvent) -> str:
    """What an issued question asked the learner ("" for an answer)."""
    args = issued(event)
    if isinstance(args, QuizArgs):
        return args.question.prompt
    return args.prompt if args is not None else ""


def quiz_outcome(event: QuizEvent) -> str:
    """ "right" / "wrong" for a graded quiz, "reply" for an answered question, else ""."""
    if isinstance(event.output, GradedOutput):
        return "right" if event.output.verdict.correct else "wrong"
    return "reply" if isinstance(event.output, ReplyOutput) else ""


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
