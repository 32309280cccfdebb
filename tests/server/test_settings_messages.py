"""A bad setting's message names it, where it came from and what to do; `.env` reads as a
shell would, and a line it cannot read is an error with its line number, not ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.server.settings import SettingsError, load_settings


def test_a_bad_number_names_its_source_and_the_default(tmp_path: Path):
    with pytest.raises(SettingsError) as raised:
        load_settings({"LH_API_PORT": "abc"}, dotenv=tmp_path / "none")
    message = str(raised.value)
    assert "LH_API_PORT" in message and "'abc'" in message
    assert "the environment" in message and "default 8100" in message


def test_a_bad_number_from_dotenv_names_the_line(tmp_path: Path):
    dotenv = tmp_path / ".env"
    dotenv.write_text("# mine\nLH_EVERY_N_QUIZ_ANSWERS=0\n")
    with pytest.raises(SettingsError, match=r"\.env line 2\).*default 3"):
        load_settings({}, dotenv=dotenv)


def test_a_line_that_is_not_name_equals_value_is_reported(tmp_path: Path):
    dotenv = tmp_path / ".env"
    dotenv.write_text("LH_MODEL=openai/x\nthis is not a setting\n")
    with pytest.raises(SettingsError, match=r"\.env line 2: expected NAME=value"):
        load_settings({}, dotenv=dotenv)


def test_export_prefixes_comments_and_quotes_read_as_in_a_shell(tmp_path: Path):
    dotenv = tmp_path / ".env"
    dotenv.write_text(
        "export LH_UI_PORT=3100\nLH_API_PORT=8101  # the API\nLH_MODEL='openai/x # not a note'\n"
    )
    settings = load_settings({}, dotenv=dotenv)
    assert (settings.ui_port, settings.api_port) == (3100, 8101)
    assert settings.model == "openai/x # not a note"


def test_the_environment_still_wins_over_dotenv(tmp_path: Path):
    dotenv = tmp_path / ".env"
    dotenv.write_text("LH_API_PORT=nonsense\n")
    assert load_settings({"LH_API_PORT": "9000"}, dotenv=dotenv).api_port == 9000


def test_the_desired_retention_is_a_probability_strictly_between_0_and_1(tmp_path: Path):
    none = tmp_path / "none"
    assert load_settings({}, dotenv=none).desired_retention == 0.9
    assert load_settings({"LH_DESIRED_RETENTION": "0.85"}, dotenv=none).desired_retention == 0.85
    for bad in ("1", "0", "90%", "nan", "-0.2"):
        with pytest.raises(SettingsError) as raised:
            load_settings({"LH_DESIRED_RETENTION": bad}, dotenv=none)
        message = str(raised.value)
        assert "LH_DESIRED_RETENTION" in message and repr(bad) in message
        assert "default 0.9" in message
