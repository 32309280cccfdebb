"""The dock's inputs turned into an `answer` frame (or a message saying what is wrong)."""

from __future__ import annotations

import re

from shared_contracts.frames import Answer

_NUMBER = re.compile(
    r"^\s*[-+−]?\s*(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?(\s*/\s*[-+]?(\d+(\.\d*)?|\.\d+))?\s*([^\d\s/.+-]\S*)?\s*$"
)


def looks_numeric(text: str) -> bool:
    """True for 0.5, 1/2, -3, 5e-1, 12 cm (the server does the exact parse and grading)."""
    return bool(_NUMBER.match(text))


def confidence_value(level: str) -> float | None:
    """The confidence control's choice ("" = not said, else "0".."100") as 0–1."""
    if not level:
        return None
    try:
        value = float(level) / 100
    except ValueError:
        return None
    return min(1.0, max(0.0, value))


def build_answer(
    tool_call_id: str, kind: str, choice: str, text: str, confidence: str
) -> Answer | str:
    """An `Answer` frame, or a short reason the dock cannot submit yet."""
    if kind == "multiple_choice":
        if not choice:
            return "Pick one of the options."
        value: str = choice
    else:
        value = text.strip()
        if not value:
            return "Write an answer first."
        if kind == "numeric" and not looks_numeric(value):
            return "Write a number, like 0.5, 1/2 or 5e-1."
        if len(value) > 8000:
            return "That answer is too long."
    return Answer(tool_call_id=tool_call_id, answer=value, confidence=confidence_value(confidence))
