"""Deterministic grading of question specs, and the public views that never show the key.

Answers of the wrong shape for their question (a number for a multiple-choice question, an
option id that is not offered) raise `GradingError`; an answer of the right shape that is
wrong, or a numeric answer that cannot be read, is a `Verdict` with `correct=False`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from fractions import Fraction

from backend.core.errors import BadToolArguments, GradingError
from shared_contracts.questions import (
    AnswerValue,
    MultipleChoice,
    Numeric,
    PublicChoice,
    PublicQuestion,
    QuestionSpec,
    ShortAnswer,
    Verdict,
)
from shared_contracts.tools import AskUserArgs

_MAX_NUMBER_TEXT = 200
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,3})?")
_THOUSANDS = re.compile(r"([+-]?)(\d{1,3}(?:,\d{3})+)((?:\.\d*)?(?:[eE][+-]?\d{1,3})?)")
_MINUS = str.maketrans({"\u2212": "-", "\u2012": "-", "\u2013": "-", "\u2044": "/", "\u2215": "/"})


def grade(spec: QuestionSpec, answer: AnswerValue) -> Verdict:
    """Grade `answer` against `spec`; `expected` and `feedback` are always filled in."""
    if isinstance(spec, MultipleChoice):
        return _grade_choice(spec, answer)
    if isinstance(spec, ShortAnswer):
        return _grade_short(spec, answer)
    return _grade_numeric(spec, answer)


def expected_text(spec: QuestionSpec) -> str:
    """The correct answer as shown to the learner after grading ("b) text", "0.5 m", ...)."""
    if isinstance(spec, MultipleChoice):
        return _choice_text(spec, spec.correct)
    if isinstance(spec, ShortAnswer):
        return spec.accepted[0]
    return _with_unit(format_number(spec.answer), spec.unit)


def public_view(spec: QuestionSpec, node_id: str | None = None) -> PublicQuestion:
    """What the learner sees: prompt, options (ids and texts), unit; never key or explanation."""
    if isinstance(spec, MultipleChoice):
        options = [PublicChoice(id=o.id, text=o.text) for o in spec.options]
        return PublicQuestion(
            kind="multiple_choice", prompt=spec.prompt, options=options, node_id=node_id
        )
    if isinstance(spec, ShortAnswer):
        return PublicQuestion(kind="short_answer", prompt=spec.prompt, node_id=node_id)
    return PublicQuestion(kind="numeric", prompt=spec.prompt, unit=spec.unit, node_id=node_id)


def ask_user_view(args: AskUserArgs) -> PublicQuestion:
    """A free-form question; its suggestions become options "s1", "s2", ..."""
    options = [PublicChoice(id=f"s{i}", text=s) for i, s in enumerate(args.suggestions, 1)]
    return PublicQuestion(kind="ask_user", prompt=args.prompt, options=options)


def validate_spec(spec: QuestionSpec) -> QuestionSpec:
    """Return `spec` if it can be graded fairly, else raise `BadToolArguments` saying why."""
    if isinstance(spec, MultipleChoice):
        ids = [o.id for o in spec.options]
        if len(set(ids)) != len(ids):
            raise BadToolArguments("quiz: option ids must be distinct")
        if spec.correct not in ids:
            raise BadToolArguments(f"quiz: correct {spec.correct!r} is not one of {ids}")
    elif isinstance(spec, ShortAnswer):
        if not all(normalise_answer(a) for a in spec.accepted):
            raise BadToolArguments(
                "quiz: an accepted answer is empty once punctuation and spaces are removed"
            )
    elif not all(math.isfinite(v) for v in (spec.answer, spec.abs_tol, spec.rel_tol)):
        raise BadToolArguments("quiz: answer and tolerances must be finite numbers")
    return spec


def normalise_answer(text: str) -> str:
    """NFKC, casefold, drop punctuation and format characters, collapse whitespace (idempotent)."""
    previous = None
    # Each step can expose work for another (NFKC can yield punctuation, dropping a
    # character can let NFKC compose), so repeat until stable; two rounds almost always do.
    for _ in range(8):
        if text == previous:
            break
        previous = text
        text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
        text = "".join(c for c in text if unicodedata.category(c)[0] != "P")
        text = "".join(c for c in text if unicodedata.category(c) != "Cf")
        text = " ".join(text.split())
    return text


def parse_number(text: str, unit: str = "") -> float | None:
    """Read "0.5", "1/2", "5e-1", " -3 ", "−0.5", "1,000" (and a trailing `unit`); else None."""
    if len(text) > _MAX_NUMBER_TEXT:
        return None
    text = _drop_unit(text.strip(), unit.strip())
    # NFKC reads fullwidth digits and ½, but would turn 10² into 102: refuse exponents.
    if any(unicodedata.decomposition(c).startswith(("<super>", "<sub>")) for c in text):
        return None
    text = unicodedata.normalize("NFKC", text).translate(_MINUS).strip()
    text = _drop_unit(text, unicodedata.normalize("NFKC", unit).strip())
    top, slash, bottom = text.partition("/")
    num = _decimal(top.strip())
    den = _decimal(bottom.strip()) if slash else Fraction(1)
    if num is None or den is None or den == 0:
        return None
    try:
        return float(num / den)
    except OverflowError:
        return None


def format_number(value: float) -> str:
    """A float as a person writes it: 3 rather than 3.0, else the shortest exact form."""
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def _drop_unit(text: str, unit: str) -> str:
    return text[: -len(unit)].rstrip() if unit and text.endswith(unit) else text


def _decimal(text: str) -> Fraction | None:
    grouped = _THOUSANDS.fullmatch(text)
    if grouped:
        text = grouped.group(1) + grouped.group(2).replace(",", "") + grouped.group(3)
    if not _DECIMAL.fullmatch(text):
        return None
    return Fraction(text)


def _grade_choice(spec: MultipleChoice, answer: AnswerValue) -> Verdict:
    if isinstance(answer, list):
        if len(answer) != 1:
            raise GradingError("a multiple-choice answer is one option id")
        answer = answer[0]
    if not isinstance(answer, str):
        raise GradingError("a multiple-choice answer is an option id, not a number")
    chosen = answer.strip()
    if chosen not in {o.id for o in spec.options}:
        raise GradingError(f"{chosen[:40]!r} is not one of this question's options")
    return _verdict(spec, chosen == spec.correct, _choice_text(spec, chosen))


def _grade_short(spec: ShortAnswer, answer: AnswerValue) -> Verdict:
    given = _one_text(answer)
    norm = normalise_answer(given)
    correct = bool(norm) and any(norm == normalise_answer(a) for a in spec.accepted)
    return _verdict(spec, correct, given)


def _grade_numeric(spec: Numeric, answer: AnswerValue) -> Verdict:
    given = _one_text(answer)
    if isinstance(answer, int | float):
        value = float(answer) if math.isfinite(answer) else None
    else:
        value = parse_number(given, spec.unit)
    if value is None:
        unit = f" (optionally followed by {spec.unit})" if spec.unit else ""
        feedback = (
            f"could not read a number from {given[:60]!r}; write it like 0.5, 1/2 or 5e-1{unit}"
        )
        return Verdict(correct=False, expected=expected_text(spec), feedback=feedback, given=given)
    limit = max(spec.abs_tol, spec.rel_tol * abs(spec.answer))
    return _verdict(spec, abs(value - spec.answer) <= limit, given)


def _one_text(answer: AnswerValue) -> str:
    if isinstance(answer, list):
        if len(answer) != 1:
            raise GradingError("this question takes a single answer, not a list")
        return answer[0]
    if isinstance(answer, bool):
        raise GradingError("an answer is text or a number, not true/false")
    if isinstance(answer, int | float):
        return format_number(float(answer)) if math.isfinite(answer) else repr(answer)
    return answer


def _verdict(spec: QuestionSpec, correct: bool, given: str) -> Verdict:
    lead = "Correct." if correct else "Not quite."
    feedback = f"{lead} {spec.explanation}".strip()
    return Verdict(correct=correct, expected=expected_text(spec), feedback=feedback, given=given)


def _choice_text(spec: MultipleChoice, option_id: str) -> str:
    for option in spec.options:
        if option.id == option_id:
            return f"{option.id}) {option.text}"
    return option_id


def _with_unit(text: str, unit: str) -> str:
    return f"{text} {unit}" if unit else text
