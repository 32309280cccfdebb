"""`harness export` and `harness import` as a learner types them: what they write, what they
print, and what they refuse (one `harness COMMAND: ...` line, exit 2, nothing written)."""

from __future__ import annotations

import io
import sqlite3
import subprocess
import zipfile
from contextlib import closing
from pathlib import Path

import pytest

from backend.cli import main
from tests.portability.helpers import digest, golden_copy, manifest_of, members, rezip
from tests.reliability.server_proc import HARNESS, ServerProcess, harness_env

GOLDEN = "lesson_python_lists"


@pytest.fixture
def lesson(env: Path) -> Path:
    return golden_copy(GOLDEN, env / "data")


def use_data_dir(monkeypatch: pytest.MonkeyPatch, path: Path) -> Path:
    monkeypatch.setenv("LH_DATA_DIR", str(path))
    return path


def one_error_line(capsys: pytest.CaptureFixture[str], command: str) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"harness {command}: "), captured.err
    return lines[0]


def test_export_then_import_into_a_fresh_dir_then_merge_twice_writes_nothing(
    lesson: Path, env: Path, monkeypatch, capsys
):
    assert main(["export", "--out", "all.zip"]) == 0
    assert capsys.readouterr().out.startswith("exported an archive with traces of ")
    fresh = use_data_dir(monkeypatch, env / "fresh")
    assert main(["import", "all.zip"]) == 0
    assert capsys.readouterr().out.startswith(f"imported into {fresh}: 1 chats, ")
    assert main(["verify"]) == 0
    capsys.readouterr()
    restored = digest(fresh)

    assert main(["import", "all.zip"]) == 2  # not empty: refused without --merge
    assert "--merge" in one_error_line(capsys, "import")
    assert digest(fresh) == restored
    for _ in range(2):
        assert main(["import", "all.zip", "--merge"]) == 0
        assert capsys.readouterr().out.startswith(
            f"merged into {fresh}: wrote 0 chats, 0 jobs, 0 materials, 0 traces, 0 graph line(s)"
        )
        assert digest(fresh) == restored
    # the ledgers came back byte for byte
    for ledger in (lesson / "graph").iterdir():
        assert (fresh / "graph" / ledger.name).read_bytes() == ledger.read_bytes()


def test_an_archive_without_traces_and_replacing_an_older_export(lesson: Path, env: Path):
    (env / "all.zip").write_bytes(b"an older export")
    assert main(["export", "--out", "all.zip", "--no-traces"]) == 0
    archive = (env / "all.zip").read_bytes()
    assert manifest_of(archive).traces is False
    assert not [name for name in members(archive) if name.startswith("traces/")]
    assert [p.name for p in env.iterdir() if p.name.endswith(".tmp")] == []


def test_the_deck_and_the_vault(lesson: Path, env: Path, capsys):
    assert main(["export", "--anki", "deck.apkg"]) == 0
    assert capsys.readouterr().out.startswith("exported an Anki deck of ")
    with zipfile.ZipFile(env / "deck.apkg") as apkg:
        (env / "collection.anki2").write_bytes(apkg.read("collection.anki2"))
    with closing(sqlite3.connect(env / "collection.anki2")) as db:
        (notes,) = db.execute("SELECT count(*) FROM notes").fetchone()
    assert notes > 0

    assert main(["export", "--markdown", "vault"]) == 0
    assert capsys.readouterr().out.startswith("exported ")
    assert (env / "vault" / "Index.md").is_file()
    assert len(list((env / "vault" / "Nodes").iterdir())) == notes
    before = digest(env / "vault")
    assert main(["export", "--markdown", "vault"]) == 2
    assert "not an empty directory" in one_error_line(capsys, "export")
    assert digest(env / "vault") == before


def _truncated(archive: bytes) -> bytes:
    return archive[: len(archive) // 2]


def _newer(archive: bytes) -> bytes:
    files = members(archive)
    files["manifest.json"] = files["manifest.json"].replace(b'"version": 1', b'"version": 7')
    return rezip(files, restate=False)


def _climbing(archive: bytes) -> bytes:
    out = io.BytesIO(archive)
    with zipfile.ZipFile(out, "a") as zf:
        zf.writestr("../../escaped.jsonl", b"{}\n")
    return out.getvalue()


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (_truncated, "damaged or truncated"),
        (_newer, "written by a newer harness"),
        (_climbing, "climbs out of the archive"),
    ],
    ids=["truncated", "newer", "dot-dot"],
)
def test_a_refused_archive_is_one_line_and_the_data_dir_is_untouched(
    lesson: Path, env: Path, monkeypatch, capsys, tamper, message
):
    """Into a data dir with data (with --merge) and into one not there yet (not made)."""
    assert main(["export", "--out", "all.zip"]) == 0
    (env / "bad.zip").write_bytes(tamper((env / "all.zip").read_bytes()))
    capsys.readouterr()
    before = digest(lesson)
    assert main(["import", "bad.zip", "--merge"]) == 2
    assert message in one_error_line(capsys, "import")
    assert digest(lesson) == before
    use_data_dir(monkeypatch, env / "fresh")
    assert main(["import", "bad.zip"]) == 2
    assert message in one_error_line(capsys, "import")
    assert not (env / "fresh").exists()
    assert not (env / "escaped.jsonl").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "--anki", "d.apkg", "--no-traces"], "--no-traces is for the archive"),
        (["export", "--out", "nowhere/all.zip"], "is not a directory"),
        (["export", "--out", "."], "is a directory"),
        (["import", "missing.zip"], "missing.zip: no such file"),
    ],
)
def test_arguments_it_cannot_use(lesson: Path, env: Path, capsys, argv, message):
    before = digest(env)
    assert main(argv) == 2
    assert message in one_error_line(capsys, argv[0])
    assert digest(env) == before


def test_export_reads_a_data_dir_it_never_creates(env: Path, capsys):
    assert main(["export", "--out", "all.zip"]) == 2
    assert "no data dir at" in one_error_line(capsys, "export")
    assert not (env / "data").exists() and not (env / "all.zip").exists()


def test_export_needs_one_of_its_targets(lesson: Path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["export"])
    assert exited.value.code == 2
    assert "one of the arguments --out --anki --markdown is required" in capsys.readouterr().err


def test_export_leaves_a_ledger_line_being_appended_to_whoever_appends_it(lesson: Path, env: Path):
    """A server may be halfway through a line: export reads up to it and cuts nothing."""
    events = lesson / "graph" / "events.jsonl"
    complete = events.read_bytes().count(b"\n")
    with events.open("ab") as ledger:
        ledger.write(b'{"id": "event-9999", "kind": "pro')
    before = digest(lesson / "graph")
    assert main(["export", "--out", "all.zip"]) == 0
    assert digest(lesson / "graph") == before
    assert manifest_of((env / "all.zip").read_bytes()).counts["events"] == complete


def test_on_postgresql_an_import_then_an_export_gives_back_the_same_archive(
    lesson: Path, env: Path, pg_cluster, monkeypatch, capsys
):
    """LH_DATABASE_URL: import writes the local learner's rows (twice: the second merge
    writes nothing), export reads them back into the very members the files gave."""
    assert main(["export", "--out", "files.zip"]) == 0
    url = pg_cluster.create_database()
    monkeypatch.setenv("LH_DATABASE_URL", url)
    capsys.readouterr()
    assert main(["import", "files.zip"]) == 0
    assert capsys.readouterr().out.startswith(f"imported into {url}: 1 chats, ")
    assert main(["import", "files.zip", "--merge"]) == 0
    assert ": wrote 0 chats, 0 jobs, 0 materials, 0 traces, 0 graph line(s)" in (
        capsys.readouterr().out
    )
    assert main(["export", "--out", "database.zip"]) == 0
    assert main(["verify"]) == 0
    from_files, from_rows = (members((env / n).read_bytes()) for n in ("files.zip", "database.zip"))
    del from_files["manifest.json"], from_rows["manifest.json"]  # their created_at differ
    assert from_rows == from_files


def test_a_running_server_keeps_import_migrate_and_a_second_server_off_its_data_dir(
    lesson: Path, env: Path, capsys
):
    assert main(["export", "--out", "all.zip"]) == 0
    capsys.readouterr()
    before = digest(lesson)
    server = ServerProcess(lesson).start()
    try:
        assert main(["import", "all.zip", "--merge"]) == 2
        assert "in use by another harness process" in one_error_line(capsys, "import")
        assert main(["migrate", "--to", "postgresql://127.0.0.1:1/none"]) == 2
        assert "in use by another harness process" in one_error_line(capsys, "migrate")
        second = subprocess.run(
            [HARNESS, "serve"], env=harness_env(lesson), capture_output=True, text=True, timeout=60
        )
        assert second.returncode == 2
        assert "in use by another harness process" in second.stderr
    finally:
        server.kill()  # SIGKILL: the kernel drops the lock with the process
    assert digest(lesson) == before
    assert main(["import", "all.zip", "--merge"]) == 0
