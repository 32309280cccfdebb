"""`harness`: the parser, and one line of the settings for `--help`."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from backend.cli.data import cmd_verify
from backend.cli.doctor import MODEL_PROBE_SECONDS, cmd_doctor
from backend.cli.errors import CliError
from backend.cli.exporting import EXPORT_DETAILS, cmd_export, export_arguments
from backend.cli.importing import IMPORT_DETAILS, cmd_import, import_arguments
from backend.cli.learner import cmd_graph, cmd_review, graph_arguments, review_arguments
from backend.cli.materials import add_arguments as material_arguments
from backend.cli.materials import cmd_materials
from backend.cli.moving import cmd_migrate
from backend.cli.replaying import cmd_replay
from backend.cli.serving import cmd_run, cmd_serve

Command = Callable[[argparse.Namespace], int]

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")

SETTINGS_HELP = """settings (environment, or a .env file in the current directory):
  LH_MODEL                  litellm model string for the teacher (unset: offline tutor)
  LH_EXTRACTOR_MODEL, LH_AUDITOR_MODEL, LH_SUBAGENT_MODEL
                            per-role models (default LH_MODEL)
  LH_DATA_DIR               root of chats/ graph/ jobs/ traces/ (./data)
  LH_DATABASE_URL           postgresql://...: every store on that database (unset: files)
  LH_API_HOST, LH_API_PORT  API bind (127.0.0.1, 8100)
  LH_UI_PORT                Reflex UI port (3000)
  LH_EVERY_N_QUIZ_ANSWERS   extraction trigger threshold (3)
  LH_DESIRED_RETENTION      recall below which a proposition is due (0.9)
  LH_API_TOKEN              when set, HTTP and WebSocket clients must carry it
  LH_WORKERS                API processes `harness serve` starts (1; more need LH_DATABASE_URL)
  LH_MATERIAL_MAX_MB        the largest document an upload takes (20)
  provider keys are litellm's own variables (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...)

graph, review and export read the local learner, or with --learner USERNAME that
account's learner (LH_AUTH=accounts: one learner's graph, queue or data on request).

start here: `harness run`, then open the UI address it prints."""

COMMANDS: tuple[tuple[str, str, str, Command], ...] = (
    (
        "serve",
        "the API alone",
        "Binds LH_API_HOST:LH_API_PORT (default 127.0.0.1:8100) and keeps its data in"
        "\nLH_DATA_DIR (created if missing). Ctrl-C stops it. With --workers N (or LH_WORKERS)"
        "\nN processes share the port and the database (LH_DATABASE_URL); one that dies is"
        "\nreplaced.",
        cmd_serve,
    ),
    (
        "run",
        "API + Reflex UI together",
        "The API as `serve`, and the UI on http://127.0.0.1:LH_UI_PORT (default 3000)."
        "\nThe first start compiles the UI (about a minute). Ctrl-C stops both.",
        cmd_run,
    ),
    (
        "graph",
        "graph stats",
        "Nodes by state, edges, events and sessions of the knowledge graph in LH_DATA_DIR"
        "\n(as of now, or of --as-of ISO). --learner USERNAME: that account's learner"
        "\n(LH_AUTH=accounts) instead of the local one.",
        cmd_graph,
    ),
    (
        "review",
        "the review queue: what to study now",
        "Most urgent first: answers given as sure that were wrong, open mix-ups, what is"
        "\ndue (recall below LH_DESIRED_RETENTION), then weak prerequisites. Reads"
        "\nLH_DATA_DIR without writing; --as-of ISO shows any moment, --json the ReviewQueue,"
        "\n--learner USERNAME that account's learner's queue (LH_AUTH=accounts).",
        cmd_review,
    ),
    (
        "doctor",
        "config, model reachability, data-dir health",
        "Prints the settings in effect, asks the configured model for one token (up to"
        f"\n{MODEL_PROBE_SECONDS} s) and checks the data dir. Exit 0 when all is well, else 1.",
        cmd_doctor,
    ),
    (
        "verify",
        "decode every record and ledger line, check invariants",
        "Reads LH_DATA_DIR (or, with LH_DATABASE_URL, the database) without writing."
        "\nExit 0 when sound, 1 with one line per problem.",
        cmd_verify,
    ),
    (
        "migrate",
        "copy the data dir into PostgreSQL",
        "harness migrate --to postgresql://user:password@host:5432/dbname"
        "\n\nCopies every learner's chats, jobs, graph ledgers, traces and materials from"
        "\nLH_DATA_DIR into the database (its schema created first) in one transaction, reads"
        "\nthem back and compares, and verifies the database. The files are only read; stop"
        "\nthe server first. Exit 0 when copied, 1 when the data dir has problems (nothing"
        "\ncopied).",
        cmd_migrate,
    ),
    (
        "materials",
        "the learner's own documents: add, list, search, remove",
        "harness materials add FILE      a PDF, Markdown or plain-text file (type read from"
        "\n                                its bytes); exit 1 with the reason if refused"
        "\nharness materials list          id, title, kind, pages, chunks"
        "\nharness materials search QUERY  the best passages (--limit N)"
        "\nharness materials remove ID     the material, its text and index entries",
        cmd_materials,
    ),
    (
        "replay",
        "re-run a recorded session strictly, fork it, or diff two",
        "harness replay CHAT_ID                          exit 0 when identical, else 1 and"
        "\n                                                the first divergence"
        "\nharness replay CHAT_ID --from-turn N --model M  strict before turn N, then live"
        "\n                                                on M: a new chat in LH_DATA_DIR"
        "\nharness replay diff A B                         per-turn differences (exit 1 if any)"
        "\n\nA chat id is a file name in LH_DATA_DIR/traces without .jsonl (chat-…).",
        cmd_replay,
    ),
    (
        "export",
        "take your data out: an archive, an Anki deck, Markdown",
        EXPORT_DETAILS,
        cmd_export,
    ),
    ("import", "bring an archive back (checked whole first)", IMPORT_DETAILS, cmd_import),
)
"""(name, summary, details, function) of each command, in `--help` order."""


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "export": export_arguments,
    "import": import_arguments,
    "review": review_arguments,
    "graph": graph_arguments,
    "materials": material_arguments,
}


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="harness",
        description="The Learning Harness: a tutor's API and UI, and tools over its data.",
        epilog=SETTINGS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, summary, details, fn in COMMANDS:
        cmd = sub.add_parser(
            name,
            help=summary,
            description=f"{summary}.\n\n{details}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        cmd.set_defaults(fn=fn)
        if name == "replay":
            _replay_arguments(cmd)
        if name == "serve":
            cmd.add_argument(
                "--workers",
                type=int,
                metavar="N",
                help="API processes on the one port (default LH_WORKERS, 1; more than 1"
                " needs LH_DATABASE_URL)",
            )
        if name == "migrate":
            cmd.add_argument("--to", required=True, metavar="URL", help="postgresql://...")
        elif name in ARGUMENTS:
            ARGUMENTS[name](cmd)
    return top


def _replay_arguments(replay: argparse.ArgumentParser) -> None:
    replay.add_argument("ids", nargs="+", metavar="CHAT_ID", help="a chat id, or: diff A B")
    replay.add_argument(
        "--from-turn", type=int, metavar="N", help="fork: strict before turn N, then live"
    )
    replay.add_argument(
        "--model", metavar="M", help="the fork's teacher: a litellm model string or offline"
    )
    replay.add_argument(
        "--template", metavar="FILE", help="replay with this teacher prompt template file"
    )


def _logging(level: str = "INFO") -> None:
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s %(message)s", stream=sys.stderr
    )


def _export_dotenv_provider_keys() -> None:
    """litellm reads its keys (OPENAI_API_KEY, ...) from the environment only; a key written
    in `.env` next to the LH_ settings must reach it too. The environment still wins."""
    from backend.server.settings import SettingsError, read_dotenv

    try:
        values = read_dotenv(Path(".env"))
    except SettingsError:
        return  # load_settings reports the bad line
    for name, (value, _) in values.items():
        if not name.startswith("LH_"):
            os.environ.setdefault(name, value)


def main(argv: Sequence[str] | None = None) -> int:
    from backend.server.settings import SettingsError

    args = parser().parse_args(argv)
    # the servers log their work; the one-shot tools print only their answer
    _logging("INFO" if args.command in ("serve", "run") else "WARNING")
    _export_dotenv_provider_keys()
    try:
        fn: Command = args.fn
        return fn(args)
    except (CliError, SettingsError) as exc:
        print(f"harness {args.command}: {exc}", file=sys.stderr)
        return 2
