"""A quote of a material is kept only if it is verbatim in the stored page (whitespace,
case, quote marks and dashes aside); what is kept is the stored text itself."""

from __future__ import annotations

from backend.core.passages import checked_quote, find_verbatim

PAGE = "The denominator counts\nthe “equal” parts — never the parts you take."


def test_exact_and_normalised_quotes_are_found():
    assert find_verbatim("counts\nthe", PAGE) == (16, 26)
    start, end = find_verbatim('THE DENOMINATOR   counts the "equal" parts - never', PAGE)
    assert PAGE[start:end] == "The denominator counts\nthe “equal” parts — never"


def test_the_kept_quote_is_the_stored_text():
    assert checked_quote('the "equal" parts - NEVER the parts', PAGE) == (
        "the “equal” parts — never the parts"
    )


def test_anything_else_is_dropped():
    assert checked_quote("the denominator counts the unequal parts", PAGE) is None
    assert checked_quote("counts the", PAGE) is None  # too short to prove anything
    assert checked_quote("", PAGE) is None
    assert find_verbatim("   ", PAGE) is None
