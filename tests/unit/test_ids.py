"""Id validation: the check every id passes before it can become part of a path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.core.errors import HarnessError, InvalidId
from backend.core.ids import is_valid_id, require_id
from shared_contracts.base import ID_PATTERN


@pytest.mark.parametrize("value", ["a", "0", "chat-0001", "n_1", "a" * 64, "9-z_"])
def test_safe_ids_pass_unchanged(value: str) -> None:
    assert is_valid_id(value)
    assert require_id(value) == value


@pytest.mark.parametrize(
    "value",
    [
        "",
        "../x",
        "..",
        "/etc/passwd",
        "a/b",
        "a\\b",
        "a\x00b",
        "abc\n",
        "\nabc",
        "Abc",
        "-abc",
        "_abc",
        "a" * 65,
        "x" * 10_000,
        "a․b",  # one dot leader (U+2024)
        "ａｂｃ",  # fullwidth letters
        "é",
        "a b",
        "a.b",
        None,
        5,
        b"abc",
        ["abc"],
    ],
)
def test_hostile_ids_are_refused(value: object) -> None:
    assert not is_valid_id(value)
    with pytest.raises(InvalidId):
        require_id(value)


def test_the_error_names_what_and_never_echoes_a_huge_value() -> None:
    with pytest.raises(InvalidId) as caught:
        require_id("x" * 10_000, "chat id")
    message = str(caught.value)
    assert message.startswith("invalid chat id: 'xxx")
    assert len(message) < 200
    assert ID_PATTERN in message
    assert isinstance(caught.value, HarnessError)
    assert caught.value.code == "bad_frame"


@settings(max_examples=200, deadline=None)
@given(st.from_regex(r"[a-z0-9][a-z0-9_-]{0,63}", fullmatch=True))
def test_every_string_of_the_pattern_is_accepted(value: str) -> None:
    assert require_id(value) == value


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_an_accepted_id_is_a_single_plain_path_segment(value: str) -> None:
    if is_valid_id(value):
        assert value not in {".", ".."}
        assert all(c in "abcdefghijklmnopqrstuvwxyz0123456789_-" for c in value)
        assert 1 <= len(value) <= 64
    else:
        with pytest.raises(InvalidId):
            require_id(value)
