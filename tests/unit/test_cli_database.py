"""`harness` with LH_DATABASE_URL and `harness migrate --to`: the commands work on the
database as on files; a database that cannot be used is one line and exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg
import pytest

from backend.cli import main
from backend.store.pg.migrations import code_version
from tests.pg_cluster import free_port
from tests.unit.test_cli_bad_input import GOLDEN, one_error_line


@pytest.fixture
def lesson(env: Path) -> Path:
    """A recorded lesson in LH_DATA_DIR; a clean LH_ environment in an empty directory."""
    shutil.copytree(GOLDEN, env / "data")
    return env / "data"


def test_migrate_then_every_reading_command_works_on_the_database(
    lesson, pg_cluster, monkeypatch, capsys
):
    url = pg_cluster.create_database()
    assert main(["verify"]) == 0
    capsys.readouterr()
    assert main(["graph"]) == 0
    files_graph = capsys.readouterr().out
    assert main(["migrate", "--to", url]) == 0
    out = capsys.readouterr().out
    assert "learner local: 1 chat(s)" in out and "verify clean" in out

    monkeypatch.setenv("LH_DATABASE_URL", url)
    assert main(["verify"]) == 0
    assert capsys.readouterr().out.strip().endswith(f"0 problem(s) in {url}")
    assert main(["graph"]) == 0
    assert capsys.readouterr().out == files_graph
    (trace,) = (lesson / "traces").glob("*.jsonl")
    assert main(["replay", trace.stem]) == 0
    assert f"replay {trace.stem}: identical" in capsys.readouterr().out

    monkeypatch.delenv("LH_DATABASE_URL")
    assert main(["migrate", "--to", url]) == 2  # into learners that have data: refused
    assert "already holds data of learner(s) local" in one_error_line(capsys, "migrate")


def test_a_database_newer_than_the_code_is_one_line_and_exit_2(
    lesson, pg_cluster, monkeypatch, capsys
):
    url = pg_cluster.create_database()
    assert main(["migrate", "--to", url]) == 0
    capsys.readouterr()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO schema_version (version, name) VALUES (%s, 'x')", [code_version() + 1]
        )
    monkeypatch.setenv("LH_DATABASE_URL", url)
    for command in (["verify"], ["graph"], ["serve"]):
        assert main(command) == 2
        assert "newer than this code" in one_error_line(capsys, command[0])


def test_an_unreachable_or_malformed_database_url_is_one_line_and_exit_2(
    lesson, monkeypatch, capsys
):
    monkeypatch.setenv("LH_DATABASE_URL", f"postgresql://u:secret@127.0.0.1:{free_port()}/x")
    for command in (["verify"], ["serve"], ["graph"]):
        assert main(command) == 2
        line = one_error_line(capsys, command[0])
        assert "cannot reach the database" in line and "secret" not in line
    monkeypatch.setenv("LH_DATABASE_URL", "mysql://u:secret@h/x")
    assert main(["verify"]) == 2
    line = one_error_line(capsys, "verify")
    assert "LH_DATABASE_URL" in line and "postgresql://" in line and "secret" not in line
    monkeypatch.delenv("LH_DATABASE_URL")
    assert main(["migrate", "--to", "data/"]) == 2
    assert "--to must be a PostgreSQL URL" in one_error_line(capsys, "migrate")


@pytest.mark.parametrize("damage", ["chats/{}.json"])
def test_migrate_refuses_an_unsound_data_dir_and_copies_nothing(lesson, pg_cluster, capsys, damage):
    url = pg_cluster.create_database()
    (chat,) = (lesson / "chats").glob("*.json")
    chat.write_bytes(b"{")
    assert main(["migrate", "--to", url]) == 1
    out = capsys.readouterr().out
    assert f"chats/{chat.name}: does not decode" in out and "nothing was copied" in out
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM chats").fetchone() == (0,)
