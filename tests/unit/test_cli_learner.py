"""`--learner USERNAME` on `harness graph`, `review` and `export`: on a deployment with
accounts (`LH_AUTH=accounts`), the account's learner's data and no one else's, on files and
on PostgreSQL; without it, the local learner's as before. An unknown name, or a data dir
with no accounts, is one line, exit 2, and nothing created."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from backend.accounts.passwords import fast_test_passwords
from backend.accounts.service import AccountService
from backend.cli import main
from backend.core.portability.layout import MANIFEST
from backend.server.runtime import RandomIds, SystemClock
from backend.server.stores import FileStoreFactory
from shared_contracts.accounts import Credentials
from tests.portability.helpers import digest, golden_copy, manifest_of, members
from tests.server.learner_graph import write_graph
from tests.unit.test_cli_bad_input import one_error_line

MOMENT = "2030-01-01T00:00Z"
"""Long after every lesson here: each graph has something due."""
READS = {
    "graph": ["graph", "--as-of", MOMENT],
    "review": ["review", "--json", "--as-of", MOMENT],
}


def sign_up(data: Path, *usernames: str) -> dict[str, Path]:
    """Each username signed up through the real AccountService over the files; its
    learner's directory (not made here)."""

    async def run() -> dict[str, Path]:
        factory = FileStoreFactory(data)
        service = await AccountService.open(
            factory.accounts, fast_test_passwords(), SystemClock(), RandomIds(), session_hours=1
        )
        roots = {}
        for name in usernames:
            await service.sign_up(Credentials(username=name, password="correct horse"), "a")
            account = await factory.accounts.find(name.strip().lower())
            assert account is not None
            roots[name.strip().lower()] = factory.root(account.learner_id)
        return roots

    return anyio.run(run)


@pytest.fixture
def deployment(env: Path) -> dict[str, Path]:
    """The local learner's lesson in LH_DATA_DIR, and two accounts beside it: ada (another
    lesson: a chat, its trace and graph) and bob (a graph only, no chat)."""
    data = golden_copy("job_and_extraction", env / "data")
    roots = {"local": data, **sign_up(data, " Ada", "bob")}
    golden_copy("lesson_python_lists", roots["ada"])
    write_graph(roots["bob"])
    return roots


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def seen_alone(roots: dict[str, Path], monkeypatch, capsys) -> dict[str, dict[str, str]]:
    """What each command shows of each learner's directory read as a data dir of its own."""
    seen: dict[str, dict[str, str]] = {}
    for name, root in roots.items():
        monkeypatch.setenv("LH_DATA_DIR", str(root))
        seen[name] = {command: run(argv, capsys) for command, argv in READS.items()}
    monkeypatch.setenv("LH_DATA_DIR", str(roots["local"]))
    return seen


def export(argv: list[str], out: Path, capsys) -> dict[str, bytes]:
    run(["export", "--out", str(out), *argv], capsys)
    archive = members(out.read_bytes())
    return {name: data for name, data in archive.items() if name != MANIFEST}


def test_graph_and_review_read_the_named_learner_only(deployment, monkeypatch, capsys):
    alone = seen_alone(deployment, monkeypatch, capsys)
    for command in READS:
        assert len({alone[name][command] for name in alone}) == 3  # three different learners
    for name in ("ada", "bob"):
        for command, argv in READS.items():
            assert run([*argv, "--learner", name], capsys) == alone[name][command]
    assert run([*READS["graph"], "--learner", " ADA "], capsys) == alone["ada"]["graph"]
    for command, argv in READS.items():  # without --learner: the local learner, as before
        assert run(argv, capsys) == alone["local"][command]
    queue = json.loads(run([*READS["review"], "--learner", "ada"], capsys))
    assert queue["items"] and "nodes 4 " in alone["ada"]["graph"]


def test_export_hands_over_the_named_learners_data_only(deployment, env, monkeypatch, capsys):
    for name in ("ada", "bob"):
        monkeypatch.setenv("LH_DATA_DIR", str(deployment[name]))
        alone = export([], env / f"{name}-alone.zip", capsys)
        monkeypatch.setenv("LH_DATA_DIR", str(deployment["local"]))
        assert export(["--learner", name], env / f"{name}.zip", capsys) == alone
    ada = (env / "ada.zip").read_bytes()
    assert manifest_of(ada).counts["chats"] == 1
    (chat,) = members(ada)["chats.jsonl"].decode().splitlines()
    assert json.loads(chat)["title"] == "hello"  # ada's lesson; the local one is "fractions please"
    assert manifest_of((env / "bob.zip").read_bytes()).counts["chats"] == 0
    local = export([], env / "local.zip", capsys)
    assert b"fractions please" in local["chats.jsonl"]


def test_on_postgresql_the_accounts_learners_are_read_there(
    deployment, env, pg_cluster, monkeypatch, capsys
):
    alone = seen_alone(deployment, monkeypatch, capsys)
    on_files = export(["--learner", "ada"], env / "files.zip", capsys)
    url = pg_cluster.create_database()
    assert "verify clean" in run(["migrate", "--to", url], capsys)  # accounts and learners
    monkeypatch.setenv("LH_DATABASE_URL", url)
    monkeypatch.setenv("LH_DATA_DIR", str(env / "elsewhere"))  # the files are not read
    for name in ("ada", "bob"):
        for command, argv in READS.items():
            assert run([*argv, "--learner", name], capsys) == alone[name][command]
    assert run(READS["graph"], capsys) == alone["local"]["graph"]
    assert export(["--learner", "ada"], env / "pg.zip", capsys) == on_files
    assert main(["graph", "--learner", "carol"]) == 2
    assert "no account is named 'carol'" in one_error_line(capsys, "graph")
    assert not (env / "elsewhere").exists()


@pytest.mark.parametrize("command", ["graph", "review", "export"])
def test_an_unknown_name_is_one_line_exit_2_and_nothing_created(deployment, env, capsys, command):
    before = digest(deployment["local"])
    argv = [command, "--learner", "carol"] + (["--out", "x.zip"] if command == "export" else [])
    assert main(argv) == 2
    assert "--learner carol: no account is named 'carol'" in one_error_line(capsys, command)
    assert main([*argv[:2], "../etc", *argv[3:]]) == 2  # no sign-up could make that name
    assert "no account is named '../etc'" in one_error_line(capsys, command)
    assert digest(deployment["local"]) == before and not (env / "x.zip").exists()


@pytest.mark.parametrize("command", ["graph", "review", "export"])
def test_learner_on_a_data_dir_with_no_accounts_is_one_line_exit_2(env, capsys, command):
    data = golden_copy("lesson_python_lists", env / "data")
    before = digest(data)
    argv = [command, "--learner", "ada"] + (["--out", "x.zip"] if command == "export" else [])
    assert main(argv) == 2
    assert "holds no accounts" in one_error_line(capsys, command)
    assert digest(data) == before and not (env / "x.zip").exists()


@pytest.mark.parametrize("command", [[], ["graph"], ["review"], ["export"]])
def test_help_says_what_learner_does(capsys, command):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    assert "--learner USERNAME" in capsys.readouterr().out


def test_a_learner_with_nothing_recorded_yet_reads_empty_and_gets_no_directory(
    deployment, env, capsys
):
    (carol,) = sign_up(deployment["local"], "carol").values()
    before = digest(deployment["local"])
    assert "the graph is empty" in run(["graph", "--learner", "carol"], capsys)
    assert json.loads(run(["review", "--json", "--learner", "carol"], capsys))["items"] == []
    run(["export", "--learner", "carol", "--out", "carol.zip"], capsys)
    counts = manifest_of((env / "carol.zip").read_bytes()).counts
    assert counts["chats"] == counts["events"] == 0
    assert digest(deployment["local"]) == before and not carol.exists()


def test_an_unreadable_account_file_is_one_line(deployment, capsys):
    (deployment["local"] / "accounts" / "users" / "ada.json").write_text("{not json")
    assert main(["graph", "--learner", "ada"]) == 2
    assert "corrupt record" in one_error_line(capsys, "graph")
