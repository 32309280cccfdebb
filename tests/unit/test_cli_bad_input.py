"""`harness` with bad input: one `harness COMMAND: …` line on stderr saying what to do,
exit 2, no traceback, and nothing created or started on the way."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from backend.cli import main

GOLDEN = Path(__file__).parents[1] / "golden" / "lesson_python_lists"


@pytest.fixture
def lesson(env: Path) -> Path:
    shutil.copytree(GOLDEN, env / "data")
    return env / "data"


def one_error_line(capsys, command: str) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"harness {command}: "), captured.err
    return lines[0]


@pytest.mark.parametrize("command", [["serve"], ["run"], ["graph"], ["verify"], ["replay", "x"]])
def test_a_bad_setting_is_one_line_and_exit_2(env, monkeypatch, capsys, command):
    monkeypatch.setenv("LH_EVERY_N_QUIZ_ANSWERS", "abc")
    assert main(command) == 2
    assert "LH_EVERY_N_QUIZ_ANSWERS" in one_error_line(capsys, command[0])
    assert not (env / "data").exists()


@pytest.mark.parametrize("command", [["graph"], ["verify"], ["replay", "chat-0001"]])
def test_reading_commands_refuse_a_missing_data_dir_and_do_not_create_it(env, capsys, command):
    assert main(command) == 2
    assert "no data dir at" in one_error_line(capsys, command[0])
    assert not (env / "data").exists()


@pytest.mark.parametrize("command", ["serve", "graph", "verify"])
def test_a_data_dir_that_is_a_file_is_named(env, capsys, command):
    (env / "data").write_text("oops")
    assert main([command]) == 2
    assert "is a file, not a directory" in one_error_line(capsys, command)


def test_serve_refuses_a_data_dir_it_cannot_create(env, monkeypatch, capsys):
    (env / "blocker").write_text("a file where a directory should be")
    monkeypatch.setenv("LH_DATA_DIR", str(env / "blocker" / "data"))
    assert main(["serve"]) == 2
    assert "cannot be created" in one_error_line(capsys, "serve")


def test_run_with_a_public_api_host_explains_instead_of_a_traceback(env, monkeypatch, capsys):
    monkeypatch.setenv("LH_API_HOST", "0.0.0.0")
    assert main(["run"]) == 2
    assert "harness serve" in one_error_line(capsys, "run")


def test_run_refuses_several_workers_instead_of_starting_one(env, monkeypatch, capsys):
    monkeypatch.setenv("LH_WORKERS", "2")
    assert main(["run"]) == 2
    assert "LH_WORKERS=2" in one_error_line(capsys, "run")
    assert not (env / "data").exists()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["chat-0001", "--model", "offline"], "use it with --from-turn"),
        (["chat-0001", "--from-turn", "7"], "has turns 1 to 6"),
        (["chat-0001", "--from-turn", "0"], "has turns 1 to 6"),
        (["chat-0001", "--template", "missing.md"], "no such file"),
        (["diff", "chat-0001", "chat-9999"], "no recorded session 'chat-9999'"),
        (["diff", "chat-0001", "chat-0001", "--from-turn", "2"], "takes no --from-turn"),
        (["../etc"], "invalid chat id"),
    ],
)
def test_replay_refuses_what_it_would_ignore_or_misread(lesson, capsys, argv, expected):
    assert main(["replay", *argv]) == 2
    assert expected in one_error_line(capsys, "replay")
    assert sorted(p.name for p in (lesson / "chats").iterdir()) == ["chat-0001.json"]


def test_doctor_on_a_fresh_machine_is_fine_without_a_data_dir(env, capsys):
    assert main(["doctor"]) == 0
    assert "not created yet" in capsys.readouterr().out
    assert not (env / "data").exists()


def test_doctor_reports_unsound_records(lesson, capsys):
    (lesson / "chats" / "chat-0001.json").write_text('{"id": "chat-0001", "title": ')
    assert main(["doctor"]) == 1
    assert "records     " in capsys.readouterr().out


def test_provider_keys_in_dotenv_reach_litellm(env, monkeypatch):
    monkeypatch.delenv("HARNESS_TEST_API_KEY", raising=False)
    (env / ".env").write_text("LH_UI_PORT=3001\nexport HARNESS_TEST_API_KEY=from-dotenv\n")
    main(["graph"])
    assert os.environ.pop("HARNESS_TEST_API_KEY") == "from-dotenv"


def test_a_fork_prints_its_answer_without_the_servers_log(lesson):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LH_")}
    done = subprocess.run(
        [sys.executable, "-m", "backend.cli", "replay", "chat-0001", "--from-turn", "2"],
        env={**env, "LH_DATA_DIR": str(lesson), "PYTHONPATH": str(Path(__file__).parents[2])},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("forked chat-0001 at turn 2") and " INFO " not in done.stderr


def test_help_lists_the_settings_and_the_replay_forms(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    for name in (
        "LH_MODEL", "LH_EXTRACTOR_MODEL", "LH_AUDITOR_MODEL", "LH_SUBAGENT_MODEL", "LH_DATA_DIR",
        "LH_API_HOST", "LH_API_PORT", "LH_UI_PORT", "LH_EVERY_N_QUIZ_ANSWERS", "LH_API_TOKEN",
    ):  # fmt: skip
        assert name in top
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    replay = capsys.readouterr().out
    assert "--from-turn N --model M" in replay and "harness replay diff A B" in replay


def test_graph_only_reads_a_ledger_with_a_torn_tail(lesson, capsys):
    ledger = lesson / "graph" / "propositions.jsonl"
    on_disk = ledger.read_bytes() + b'{"id": "node-9999", "statem'
    ledger.write_bytes(on_disk)
    assert main(["graph"]) == 0
    assert "nodes " in capsys.readouterr().out
    assert ledger.read_bytes() == on_disk  # `verify` still finds the torn tail to report
