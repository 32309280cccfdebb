"""Home's learner model in words: "Review (N)" with the queue's top reasons, and the
calibration line (how well stated confidence matched the answers)."""

from __future__ import annotations

import dataclasses

from shared_contracts.learner import Calibration, ReviewQueue
from ui.model.graph_view import clip
from ui.model.mathdelims import plain_math

REVIEW_TOP = 3
"""Reasons shown under "Review (N)"; the API is asked for only these."""
NOTHING_DUE = "Nothing to review right now: nothing you have learned is fading."
A_LITTLE = 0.25
"""A gap between felt and actual accuracy below this is "a little" over/underconfident."""


@dataclasses.dataclass
class ReasonView:
    node_id: str = ""
    statement: str = ""
    detail: str = ""
    reason: str = "due"
    """The queue's reason (`confidently_wrong`, `misconception_open`, `due`,
    `prerequisite_at_risk`): its icon beside the sentence."""


@dataclasses.dataclass
class ReviewView:
    count: int = 0
    label: str = "Review"
    """ "Review (5)"."""
    reasons: list[ReasonView] = dataclasses.field(default_factory=list)
    more: str = ""
    """ "and 2 more" when the queue holds more than the reasons shown."""
    empty_note: str = ""
    """Said kindly when nothing is due ("" while something is)."""


def review_view(queue: ReviewQueue, top: int = REVIEW_TOP) -> ReviewView:
    """The queue as home shows it: the count on the button, the first reasons under it."""
    count = max(queue.total, len(queue.items))
    if count == 0:
        return ReviewView(empty_note=NOTHING_DUE)
    shown = queue.items[:top]
    return ReviewView(
        count=count,
        label=f"Review ({count})",
        reasons=[
            ReasonView(
                node_id=item.node_id,
                statement=clip(plain_math(item.statement), 90),
                detail=item.detail,
                reason=item.reason,
            )
            for item in shown
        ],
        more=f"and {count - len(shown)} more" if count > len(shown) else "",
    )


def _percent(value: float) -> str:
    return f"{round(value * 100)}%"


def calibration_line(cal: Calibration) -> str:
    """The verdict in words with the answers it is from."""
    if cal.answers == 0:
        return (
            "Say how sure you are when you answer: after a few answers, this shows "
            "whether your confidence matches your results."
        )
    if cal.verdict == "too_few_answers" or cal.accuracy is None:
        said = "1 answer" if cal.answers == 1 else f"{cal.answers} answers"
        return (
            f"{said} so far with how sure you were: too few yet to tell whether "
            "your confidence matches your results."
        )
    right = round(cal.accuracy * cal.answers)
    lead = f"You were right {right} of {cal.answers} times when you said how sure you were"
    felt = cal.mean_confidence
    if cal.verdict == "calibrated":
        return f"{lead}, and felt about that sure: your confidence matches your results."
    gap = None if felt is None else felt - cal.accuracy
    over = cal.verdict == "overconfident"
    # The verdict weighs the UI's open-ended levels; a plain mean can disagree in sign,
    # and then it is left out rather than contradict the verdict.
    if gap is None or (gap > 0) != over:
        word = "overconfident" if over else "underconfident"
        return f"{lead}: {word}."
    degree = "a little" if abs(gap) < A_LITTLE else "quite"
    if over:
        return f"{lead}, but felt about {_percent(felt or 0)} sure: {degree} overconfident."
    return (
        f"{lead}, but felt only about {_percent(felt or 0)} sure: {degree} underconfident "
        "(trust yourself more)."
    )
