"""Grading (multiple choice, short answer, numeric), public views and spec checks."""

from __future__ import annotations

from fractions import Fraction

import msgspec
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from backend.core.errors import BadToolArguments, GradingError
from backend.core.questions import (
    ask_user_view,
    expected_text,
    format_number,
    grade,
    normalise_answer,
    parse_number,
    public_view,
    validate_spec,
)
from shared_contracts.questions import (
    Choice,
    MultipleChoice,
    Numeric,
    PublicChoice,
    ShortAnswer,
)
from shared_contracts.tools import AskUserArgs

MC = MultipleChoice(
    prompt="Which is prime?",
    options=[Choice(id="a", text="4"), Choice(id="b", text="7"), Choice(id="c", text="9")],
    correct="b",
    explanation="7 has no divisors but 1 and itself.",
)
SHORT = ShortAnswer(
    prompt="Name the powerhouse of the cell.",
    accepted=["Mitochondrion", "mitochondria"],
    explanation="It makes ATP.",
)
NUM = Numeric(prompt="Half of one?", answer=0.5, abs_tol=0.01, unit="kg")


# ---- multiple choice ----------------------------------------------------------------------


@pytest.mark.parametrize("answer", ["b", ["b"], " b "])
def test_multiple_choice_grades_the_correct_id(answer: str | list[str]) -> None:
    verdict = grade(MC, answer)
    assert verdict.correct
    assert verdict.expected == "b) 7"
    assert verdict.given == "b) 7"
    assert verdict.feedback == "Correct. 7 has no divisors but 1 and itself."


def test_multiple_choice_wrong_id() -> None:
    verdict = grade(MC, "a")
    assert not verdict.correct
    assert verdict.expected == "b) 7"
    assert verdict.given == "a) 4"
    assert verdict.feedback.startswith("Not quite. ")


def test_multiple_choice_grades_by_id_never_by_text() -> None:
    with pytest.raises(GradingError, match="not one of"):
        grade(MC, "7")


@pytest.mark.parametrize("answer", ["z", ["a", "b"], [], 2.0])
def test_multiple_choice_answers_of_the_wrong_shape_are_grading_errors(answer: object) -> None:
    with pytest.raises(GradingError):
        grade(MC, answer)  # type: ignore[arg-type]


# ---- short answer -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "mitochondrion",
        "  MITOCHONDRIA!! ",
        "Mitochondrion.",
        "ｍｉｔｏｃｈｏｎｄｒｉｏｎ",
        ["mitochondria"],
    ],
)
def test_short_answer_accepts_normalised_spellings(answer: str | list[str]) -> None:
    verdict = grade(SHORT, answer)
    assert verdict.correct
    assert verdict.expected == "Mitochondrion"
    assert verdict.feedback == "Correct. It makes ATP."


def test_short_answer_wrong_keeps_what_was_given() -> None:
    verdict = grade(SHORT, "ribosome")
    assert not verdict.correct
    assert verdict.given == "ribosome"
    assert verdict.expected == "Mitochondrion"


def test_short_answer_empty_is_never_correct() -> None:
    spec = ShortAnswer(prompt="p", accepted=["?"])
    assert not grade(spec, "").correct
    assert not grade(spec, "!").correct


def test_short_answer_list_of_two_is_a_grading_error() -> None:
    with pytest.raises(GradingError):
        grade(SHORT, ["a", "b"])


def test_short_answer_given_as_a_number_is_read_as_text() -> None:
    verdict = grade(ShortAnswer(prompt="p", accepted=["42"]), 42.0)
    assert verdict.correct
    assert verdict.given == "42"


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("  Hello,\tWORLD!! ", "hello world"),
        ("Straße", "strasse"),
        ("ﬁne", "fine"),
        ("e\u0301", "é"),
        ("soft\u00adhyphen", "softhyphen"),
        ("«quoted» — dash", "quoted dash"),
    ],
)
def test_normalise_answer(raw: str, normal: str) -> None:
    assert normalise_answer(raw) == normal


# ---- numeric ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1/2", 0.5),
        ("0.5", 0.5),
        ("5e-1", 0.5),
        (" -3 ", -3.0),
        ("−0.5", -0.5),
        ("1,000", 1000.0),
        ("1,234,567.5", 1234567.5),
        (".5", 0.5),
        ("+2", 2.0),
        ("1 / 4", 0.25),
        ("-1/2", -0.5),
        ("½", 0.5),
        ("３", 3.0),
        ("2.5E+2", 250.0),
    ],
)
def test_parse_number_reads_common_spellings(text: str, value: float) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "",
        "abc",
        "1,5",
        "1_000",
        "1/0",
        "1/2/3",
        "nan",
        "inf",
        "1e999",
        "10²",
        "0x10",
        "1..2",
        "1" * 300,
    ],
)
def test_parse_number_refuses_what_it_cannot_read_exactly(text: str) -> None:
    assert parse_number(text) is None


def test_parse_number_strips_the_unit() -> None:
    assert parse_number("3 kg", unit="kg") == 3.0
    assert parse_number("3kg", unit="kg") == 3.0
    assert parse_number("3 m²", unit="m²") == 3.0
    assert parse_number("3 kg") is None


@pytest.mark.parametrize("answer", [0.5, 0.505, "1/2", "0.495 kg", "5e-1", ["0.5"]])
def test_numeric_within_tolerance_is_correct(answer: object) -> None:
    verdict = grade(NUM, answer)  # type: ignore[arg-type]
    assert verdict.correct
    assert verdict.expected == "0.5 kg"
    assert verdict.feedback == "Correct."


def test_numeric_outside_tolerance_is_wrong() -> None:
    verdict = grade(NUM, "0.52")
    assert not verdict.correct
    assert verdict.given == "0.52"
    assert verdict.feedback == "Not quite."


def test_numeric_relative_tolerance() -> None:
    spec = Numeric(prompt="c?", answer=3e8, rel_tol=0.01)
    assert grade(spec, "2.98e8").correct
    assert not grade(spec, "2.9e8").correct
    assert grade(spec, 300_000_000).correct


def test_numeric_default_tolerance_is_tight() -> None:
    spec = Numeric(prompt="p", answer=0.1)
    assert grade(spec, "1/10").correct
    assert not grade(spec, "0.1001").correct


def test_unreadable_numeric_answer_is_a_wrong_verdict_not_an_error() -> None:
    verdict = grade(NUM, "half")
    assert not verdict.correct
    assert verdict.given == "half"
    assert verdict.expected == "0.5 kg"
    assert verdict.feedback.startswith("could not read a number")
    assert "kg" in verdict.feedback


def test_expected_text() -> None:
    assert expected_text(MC) == "b) 7"
    assert expected_text(SHORT) == "Mitochondrion"
    assert expected_text(Numeric(prompt="p", answer=3.0)) == "3"
    assert expected_text(Numeric(prompt="p", answer=0.1, unit="m")) == "0.1 m"


def test_format_number() -> None:
    assert format_number(3.0) == "3"
    assert format_number(-0.25) == "-0.25"
    assert format_number(1e20) == "1e+20"


# ---- spec checks --------------------------------------------------------------------------


def test_validate_spec_refuses_unfair_questions() -> None:
    assert validate_spec(MC) is MC
    with pytest.raises(BadToolArguments, match="not one of"):
        validate_spec(msgspec.structs.replace(MC, correct="z"))
    with pytest.raises(BadToolArguments, match="distinct"):
        validate_spec(msgspec.structs.replace(MC, options=[MC.options[0], MC.options[0]]))
    with pytest.raises(BadToolArguments, match="empty"):
        validate_spec(ShortAnswer(prompt="p", accepted=["ok", "..."]))
    with pytest.raises(BadToolArguments, match="finite"):
        validate_spec(Numeric(prompt="p", answer=float("nan")))


# ---- public views -------------------------------------------------------------------------


def test_public_views_carry_no_key() -> None:
    view = public_view(MC, node_id="primes")
    assert view.kind == "multiple_choice"
    assert view.options == [PublicChoice(id=o.id, text=o.text) for o in MC.options]
    assert view.node_id == "primes"
    assert public_view(NUM).unit == "kg"
    for spec in (MC, SHORT, NUM):
        raw = msgspec.json.encode(public_view(spec)).decode()
        for key in ("correct", "accepted", "answer", "explanation", "abs_tol", "rel_tol"):
            assert f'"{key}"' not in raw
        for secret in ("divisors", "ATP", "0.5", "Mitochondri", '"b"'):
            assert secret not in raw.replace('"id":"b"', "")


def test_ask_user_view_numbers_its_suggestions() -> None:
    view = ask_user_view(AskUserArgs(prompt="Which topic?", suggestions=["Rings", "Fields"]))
    assert view.kind == "ask_user"
    assert view.prompt == "Which topic?"
    assert view.options == [
        PublicChoice(id="s1", text="Rings"),
        PublicChoice(id="s2", text="Fields"),
    ]


# ---- properties ---------------------------------------------------------------------------

# exact binary values, so the tolerance boundary itself is computed without rounding
INTS = st.integers(min_value=-(10**6), max_value=10**6)


@settings(max_examples=200, deadline=None)
@given(answer=INTS, tol=st.integers(min_value=0, max_value=1000), offset=INTS)
def test_numeric_tolerance_is_symmetric(answer: int, tol: int, offset: int) -> None:
    spec = Numeric(prompt="p", answer=float(answer), abs_tol=float(tol), rel_tol=0.0)
    above = grade(spec, float(answer + offset))
    below = grade(spec, float(answer - offset))
    assert above.correct == below.correct == (abs(offset) <= tol)


@settings(max_examples=200, deadline=None)
@given(
    num=st.integers(min_value=-(10**9), max_value=10**9),
    den=st.integers(min_value=1, max_value=10**6),
    target=st.floats(min_value=-1e4, max_value=1e4, allow_nan=False),
)
def test_equivalent_spellings_grade_the_same(num: int, den: int, target: float) -> None:
    value = float(Fraction(num, den))
    spellings = [f"{num}/{den}", repr(value), f"{value:.17e}", f"{value!r} kg"]
    if value == int(value) and abs(value) < 1e15:
        spellings += [f"{int(value):,}", str(int(value)).replace("-", "−")]
    spec = Numeric(prompt="p", answer=target, rel_tol=1e-6, unit="kg")
    verdicts = {grade(spec, s).correct for s in spellings} | {grade(spec, value).correct}
    assert len(verdicts) == 1
    assert {parse_number(s, "kg") for s in spellings} == {value}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_normalise_answer_is_idempotent(text: str) -> None:
    once = normalise_answer(text)
    assert normalise_answer(once) == once


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_normalised_spelling_variants_grade_the_same(text: str) -> None:
    assume(normalise_answer(text))
    spec = ShortAnswer(prompt="p", accepted=[text])
    assert grade(spec, f"  {text.upper()}!? ").correct == grade(spec, text).correct


WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1)
OPTION_IDS = st.lists(st.sampled_from("abcdefgh"), min_size=2, max_size=6, unique=True)


@st.composite
def question_specs(draw: st.DrawFn) -> MultipleChoice | ShortAnswer | Numeric:
    kind = draw(st.sampled_from(["mc", "short", "numeric"]))
    prompt = draw(WORDS)
    explanation = draw(st.text(min_size=0, max_size=30))
    if kind == "mc":
        ids = draw(OPTION_IDS)
        options = [Choice(id=i, text=draw(WORDS)) for i in ids]
        return MultipleChoice(
            prompt=prompt,
            options=options,
            correct=draw(st.sampled_from(ids)),
            explanation=explanation,
        )
    if kind == "short":
        accepted = draw(st.lists(WORDS, min_size=1, max_size=3))
        return ShortAnswer(prompt=prompt, accepted=accepted, explanation=explanation)
    return Numeric(
        prompt=prompt,
        answer=draw(st.floats(allow_nan=False, allow_infinity=False)),
        abs_tol=draw(st.floats(min_value=0, max_value=10)),
        unit=draw(st.sampled_from(["", "m", "kg"])),
        explanation=explanation,
    )


@settings(max_examples=200, deadline=None)
@given(question_specs(), st.none() | st.sampled_from(["n1", "topic-2"]))
def test_public_view_never_leaks_the_key(
    spec: MultipleChoice | ShortAnswer | Numeric, node_id: str | None
) -> None:
    view = msgspec.json.decode(msgspec.json.encode(public_view(spec, node_id)))
    assert set(view) <= {"kind", "prompt", "options", "unit", "node_id"}
    assert all(set(option) == {"id", "text"} for option in view["options"])
    # every value shown is public teacher text: the prompt, option ids and texts, the unit
    allowed = {spec.prompt, getattr(spec, "unit", ""), node_id, None}
    if isinstance(spec, MultipleChoice):
        allowed |= {o.id for o in spec.options} | {o.text for o in spec.options}
    shown = [view["prompt"], view.get("unit", ""), view.get("node_id")]
    shown += [v for option in view["options"] for v in option.values()]
    assert set(shown) <= allowed
    secrets = [*getattr(spec, "accepted", []), spec.explanation]
    if isinstance(spec, Numeric):
        secrets += [repr(spec.answer), format_number(spec.answer)]
    for secret in secrets:
        if secret and not any(secret in str(text) for text in allowed - {None}):
            # an absent node_id is None, not the text "None"
            assert not any(secret in str(v) for v in shown if v is not None), (spec, secret)
