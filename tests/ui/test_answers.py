"""Dock inputs → answer frames."""

from __future__ import annotations

import pytest

from shared_contracts.frames import Answer
from ui.answers import build_answer, looks_numeric


@pytest.mark.parametrize("text", ["1/2", "0.5", "-3", "5e-1", " 2 / 3 ", "12 cm", ".5"])
def test_numbers_and_fractions_are_accepted(text):
    assert looks_numeric(text)


@pytest.mark.parametrize("text", ["half", "", "1/", "/2", "one half"])
def test_non_numbers_are_refused(text):
    assert not looks_numeric(text)


def test_numeric_answer_is_sent_as_written_with_confidence():
    frame = build_answer("call_1", "numeric", "", " 1/2 ", "60")
    assert frame == Answer(tool_call_id="call_1", answer="1/2", confidence=0.6)


def test_choice_answer_sends_the_option_id():
    assert build_answer("c", "multiple_choice", "b", "", "").answer == "b"
    assert build_answer("c", "multiple_choice", "", "", "") == "Pick one of the options."


def test_empty_and_unreadable_answers_get_a_hint():
    assert build_answer("c", "short_answer", "", "  ", "") == "Write an answer first."
    assert "number" in build_answer("c", "numeric", "", "half", "")
