"""How well stated confidence matches correctness, over the graded answers that carry one:
the Brier score, accuracy and mean confidence, and the verdict of
`backend.core.calibration_verdict` (over- or underconfident, calibrated, too few answers)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from backend.core.calibration_verdict import verdict
from backend.core.fsrs_review import Answered
from shared_contracts.graph import EventLine
from shared_contracts.learner import Calibration


def calibration(answers: Iterable[Answered], *, as_of: datetime | None = None) -> Calibration:
    """The calibration of `answers` (probe events or probes; those without a verdict or a
    stated confidence, or after `as_of`, are left out)."""
    rated = [
        (a.confidence, 1.0 if a.correct else 0.0)
        for a in answers
        if a.confidence is not None and a.correct is not None and (as_of is None or a.at <= as_of)
    ]
    n = len(rated)
    if not n:
        return Calibration(answers=0, verdict="too_few_answers")
    right = sum(y for _, y in rated)
    return Calibration(
        answers=n,
        brier=sum((c - y) ** 2 for c, y in rated) / n,
        accuracy=right / n,
        mean_confidence=sum(c for c, _ in rated) / n,
        verdict=verdict(rated),
    )


def graded_answers(events: Iterable[EventLine]) -> list[EventLine]:
    """The graded answers among graph events, each once: an answer that showed a
    misconception is also a probe of the misconception's node (same chat, same question),
    and is one answer all the same."""
    seen: set[tuple[str, str]] = set()  # (chat, question) or, with no question id, (ref, "")
    answers = []
    for event in events:
        if event.kind not in ("quiz_correct", "quiz_incorrect"):
            continue
        key = (event.chat_id, event.tool_call_id) if event.tool_call_id else (event.ref, "")
        if key not in seen:
            seen.add(key)
            answers.append(event)
    return answers
