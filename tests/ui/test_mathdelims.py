"""Math delimiter normalisation for the markdown renderer."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ui.model.mathdelims import normalise_math


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"so \( x^2 \) grows", "so $x^2$ grows"),
        (r"\(a\) and \(b\)", "$a$ and $b$"),
        (r"inline \[ \sum_i i \] here", r"inline $$\sum_i i$$ here"),
        ("before\n\\[\n\\int f\\,dx\n\\]\nafter", "before\n$$\n\\int f\\,dx\n$$\nafter"),
        ("  \\[ E = mc^2 \\]  ", "  $$\nE = mc^2\n$$  "),
        ("\\(\n x \n\\)", "$x$"),
        ("no math, $already$ fine", "no math, $already$ fine"),
    ],
)
def test_latex_delimiters_become_dollars(text: str, expected: str) -> None:
    assert normalise_math(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        r"unclosed \( x",
        r"empty \(\) and \[ \]",
        "a \\( b\n\nc \\)",  # never across a paragraph break
        r"escaped \\(x\)",
        r"closing first \) then \(",
    ],
)
def test_what_is_not_math_is_left_alone(text: str) -> None:
    assert normalise_math(text) == text


def test_inline_code_is_left_alone() -> None:
    text = r"write `\(x\)` to get \(x\), or ``a `\[y\]` b`` for \[y\]"
    assert normalise_math(text) == r"write `\(x\)` to get $x$, or ``a `\[y\]` b`` for $$y$$"


def test_an_unmatched_backtick_is_plain_text() -> None:
    assert normalise_math(r"a ` then \(x\)") == "a ` then $x$"


def test_fenced_code_is_left_alone() -> None:
    text = (
        "\\(a\\)\n```latex\n\\(b\\) \\[c\\]\n```\n"
        "\\(d\\)\n~~~~\n\\(e\\)\n~~~\n\\(f\\)\n~~~~\n\\(g\\)"
    )
    assert normalise_math(text) == (
        "$a$\n```latex\n\\(b\\) \\[c\\]\n```\n$d$\n~~~~\n\\(e\\)\n~~~\n\\(f\\)\n~~~~\n$g$"
    )


def test_an_unclosed_fence_runs_to_the_end() -> None:
    text = "\\(a\\)\n```\n\\(b\\)\n"
    assert normalise_math(text) == "$a$\n```\n\\(b\\)\n"


PIECES = st.sampled_from(
    [r"\(x\)", r"\[y\]", r"\( a+b \)", "`\\(c\\)`", "\n", "\n\n", "```\n", " ", "t", "$z$", "\\"]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(PIECES, max_size=12).map("".join))
def test_normalise_math_never_crashes_and_code_survives(text: str) -> None:
    out = normalise_math(text)
    if "```" not in text and "\\\\" not in text:
        assert out.count("`\\(c\\)`") == text.count("`\\(c\\)`")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([r"\(x\)", r"\[y\]", "`\\(c\\)`", " and ", "\n", "t"]), max_size=10)
)
def test_normalise_math_is_idempotent_on_paired_delimiters(pieces: list[str]) -> None:
    once = normalise_math("".join(pieces))
    assert normalise_math(once) == once
    assert "\\(x\\)" not in once.replace("`\\(c\\)`", "")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Multiply:\n\n$$\\frac{2}{3} = \\frac{8}{12}$$\n\nThen",
            "Multiply:\n\n$$\n\\frac{2}{3} = \\frac{8}{12}\n$$\n\nThen",
        ),
        ("  $$ x^2 $$  ", "  $$\n  x^2\n  $$"),
        ("so $$x$$ inline stays", "so $$x$$ inline stays"),
        ("$$\nalready a block\n$$", "$$\nalready a block\n$$"),
        ("`$$code$$`", "`$$code$$`"),
        ("```\n$$fenced$$\n```", "```\n$$fenced$$\n```"),
        ("$$ $$", "$$ $$"),
    ],
)
def test_a_display_formula_on_a_line_of_its_own_becomes_a_block(text: str, expected: str) -> None:
    assert normalise_math(text) == expected
    assert normalise_math(expected) == expected
