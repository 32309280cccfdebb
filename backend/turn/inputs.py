"""What starts a turn: a tagged union, matched once by the turn (no `kind: str`)."""

from __future__ import annotations

from dataclasses import dataclass

from shared_contracts.chat import ToolPart
from shared_contracts.frames import UserMessage


@dataclass(frozen=True, slots=True)
class UserTurn:
    """The learner's message: written into the turn's opening write."""

    frame: UserMessage


@dataclass(frozen=True, slots=True)
class AnswerTurn:
    """An answer to the open question, already graded (see `answers.prepare_answer`): it
    is written into the question's part, then the lesson goes on."""

    answered: ToolPart


@dataclass(frozen=True, slots=True)
class DeliverTurn:
    """Only hands finished background results to the teacher (it may end without a word)."""


TurnInput = UserTurn | AnswerTurn | DeliverTurn
