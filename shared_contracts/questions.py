"""Question specs (with their keys, server-side only), their public views, and verdicts."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from shared_contracts.base import Body, Id, Inbound, Record

Prompt = Annotated[str, msgspec.Meta(min_length=1, max_length=4000)]
OptionId = Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}(?!\n)$")]


class Choice(Inbound, kw_only=True, frozen=True):
    id: OptionId
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]


class MultipleChoice(Inbound, tag_field="kind", tag="multiple_choice", kw_only=True, frozen=True):
    """Graded by option id, never by option text."""

    prompt: Prompt
    options: Annotated[list[Choice], msgspec.Meta(min_length=2, max_length=10)]
    correct: OptionId
    explanation: str = ""


class ShortAnswer(Inbound, tag_field="kind", tag="short_answer", kw_only=True, frozen=True):
    """Graded after normalising case, whitespace, punctuation and unicode."""

    prompt: Prompt
    accepted: Annotated[list[str], msgspec.Meta(min_length=1, max_length=20)]
    explanation: str = ""


class Numeric(Inbound, tag_field="kind", tag="numeric", kw_only=True, frozen=True):
    """Graded within an absolute or relative tolerance; accepts 1/2, 0.5, 5e-1."""

    prompt: Prompt
    answer: float
    abs_tol: Annotated[float, msgspec.Meta(ge=0)] = 0.0
    rel_tol: Annotated[float, msgspec.Meta(ge=0)] = 1e-9
    unit: str = ""
    explanation: str = ""


QuestionSpec = MultipleChoice | ShortAnswer | Numeric


class PublicChoice(Body, kw_only=True, frozen=True):
    id: str
    text: str


class PublicQuestion(Body, kw_only=True, frozen=True):
    """What the learner may see of a question: never the key."""

    kind: Literal["multiple_choice", "short_answer", "numeric", "ask_user"]
    prompt: str
    options: list[PublicChoice] = msgspec.field(default_factory=list)
    unit: str = ""
    node_id: Id | None = None


class Verdict(Record, kw_only=True, gc=False, frozen=True):
    correct: bool
    expected: str
    feedback: str = ""
    given: str = ""


AnswerValue = str | float | list[str]
