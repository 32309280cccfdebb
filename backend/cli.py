"""`harness`: serve | run | graph | doctor | verify | replay.

Bad input (a setting, an argument, the data dir) is one line `harness COMMAND: …` on
stderr and exit 2, never a traceback. Exit 1 means the command ran and found a problem
(a divergence, an unsound record, an unreachable model).
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import socket
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: `harness --help` must not pay for them
    import uvicorn

    from backend.server.settings import Settings
    from shared_contracts.graph import GraphStats
    from shared_contracts.trace import AnyTraceEvent

Command = Callable[[argparse.Namespace], int]

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")

MAX_INBOUND_WS_BYTES = 64 * 1024
MODEL_PROBE_SECONDS = 15
SETTINGS_HELP = """settings (environment, or a .env file in the current directory):
  LH_MODEL                  litellm model string for the teacher (unset: offline tutor)
  LH_EXTRACTOR_MODEL, LH_AUDITOR_MODEL, LH_SUBAGENT_MODEL
                            per-role models (default LH_MODEL)
  LH_DATA_DIR               root of chats/ graph/ jobs/ traces/ (./data)
  LH_API_HOST, LH_API_PORT  API bind (127.0.0.1, 8100)
  LH_UI_PORT                Reflex UI port (3000)
  LH_EVERY_N_QUIZ_ANSWERS   extraction trigger threshold (3)
  LH_API_TOKEN              when set, HTTP and WebSocket clients must carry it
  provider keys are litellm's own variables (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...)

start here: `harness run`, then open the UI address it prints."""


class CliError(Exception):
    """Input the command cannot run with; the message says what to do instead."""


class PortInUse(SystemExit):
    pass


def bind(host: str, port: int, setting: str = "LH_API_PORT") -> socket.socket:
    """Bind before starting anything, so a busy port is a clear message, not a traceback."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(
                f"harness: port {port} on {host} is already in use — stop the other process"
                f" or choose another port ({setting})."
            ) from None
        raise SystemExit(
            f"harness: cannot bind {host}:{port}: {exc.strerror} (check LH_API_HOST, {setting})"
        ) from None
    return sock


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


def uvicorn_config(app: Any, **extra: Any) -> uvicorn.Config:
    """The project's uvicorn settings for an ASGI `app` (`extra`: more `Config` options)."""
    import uvicorn

    return uvicorn.Config(
        app,
        ws="websockets-sansio",
        ws_max_size=MAX_INBOUND_WS_BYTES,
        ws_per_message_deflate=False,
        lifespan="on",
        log_level="warning",
        **extra,
    )


# -- the data dir and the model, checked before anything starts ------------------------


def _not_a_file(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise CliError(f"LH_DATA_DIR {path} is a file, not a directory; point it elsewhere")


def writable_data_dir(path: Path) -> Path:
    """`path`, created if missing; a CliError when the server could not write there."""
    import tempfile

    _not_a_file(path)
    verb = "written" if path.is_dir() else "created"
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as exc:
        raise CliError(
            f"the data dir {path} cannot be {verb} ({exc.strerror});"
            " set LH_DATA_DIR to a directory you can write"
        ) from None
    return path


def existing_data_dir(path: Path) -> Path:
    """`path` when it holds data to read; reading commands never create it."""
    _not_a_file(path)
    if not path.is_dir():
        raise CliError(
            f"there is no data dir at {path.resolve()} (LH_DATA_DIR): nothing recorded"
            " there yet. Take a lesson with `harness run`, or point LH_DATA_DIR at your data"
        )
    return path


def missing_provider_keys(model: str) -> list[str]:
    """The `*_KEY` variables litellm wants for `model` and does not find (a hint only)."""
    import contextlib
    import io

    import litellm

    with contextlib.redirect_stdout(io.StringIO()):  # litellm prints a provider list
        try:
            found = litellm.validate_environment(model=model)
        except Exception:
            return []
    return [k for k in found.get("missing_keys") or [] if k.endswith("_KEY")]


def model_hint(model: str, detail: str) -> str:
    """What to do after the doctor's one-token call to `model` failed with `detail`."""
    import contextlib
    import io

    import litellm

    with contextlib.redirect_stdout(io.StringIO()):
        try:
            litellm.get_llm_provider(model)
        except Exception:
            return (
                f"{model!r} names no litellm provider: write provider/model, e.g."
                " openai/gpt-4o-mini (https://docs.litellm.ai/docs/providers)"
            )
    missing = missing_provider_keys(model)
    if missing:
        return f"set {' and '.join(missing)} in the environment or .env"
    if "Timeout" in detail:
        return f"no answer within {MODEL_PROBE_SECONDS} s: check the provider or its API base URL"
    if "Connection" in detail:
        return "nothing answered: check the network, or the server at the API base URL"
    if "Authentication" in detail or "401" in detail:
        return "the provider refused the key: check it"
    return "check LH_MODEL, the provider's key and its API base URL"


def _warn_missing_keys(settings: Settings) -> None:
    models = {settings.model, settings.extractor_model, settings.auditor_model}
    for model in sorted(m for m in models | {settings.subagent_model} if m):
        missing = missing_provider_keys(model)
        if missing:
            print(
                f"harness: warning: {model} needs {' and '.join(missing)}, which is not set;"
                " lessons will fail until it is (see `harness doctor`)",
                file=sys.stderr,
                flush=True,
            )


# -- commands ----------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from backend.server.app import create_app
    from backend.server.settings import load_settings

    settings = load_settings()
    writable_data_dir(settings.data_dir)
    sock = bind(settings.api_host, settings.api_port)
    host, port = sock.getsockname()[:2]
    label = "offline tutor" if settings.offline else settings.model_label
    if not settings.offline:
        _warn_missing_keys(settings)
    print(f"harness API on http://{host}:{port} ({label}; data in {settings.data_dir})", flush=True)
    uvicorn.Server(uvicorn_config(create_app(settings))).run(sockets=[sock])
    return 0


def _exit_on_signal(signum: int, frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C, so `finally` blocks stop the child processes."""
    raise SystemExit(128 + signum)


def cmd_run(args: argparse.Namespace) -> int:
    import signal
    import threading

    import uvicorn

    from backend.server.app import create_app
    from backend.server.settings import load_settings
    from backend.server.ui_launcher import LOOPBACK, start_ui

    settings = load_settings()
    if settings.api_host not in (LOOPBACK, "localhost"):
        raise CliError(
            f"LH_API_HOST={settings.api_host}: `harness run` serves the UI on {LOOPBACK}"
            " only; unset LH_API_HOST, or use `harness serve` to expose the API alone"
        )
    if settings.ui_port == 0:
        raise CliError("LH_UI_PORT=0: `harness run` needs a fixed UI port to print; pick one")
    writable_data_dir(settings.data_dir)
    api_sock = bind(settings.api_host, settings.api_port)
    bind(settings.api_host, settings.ui_port, "LH_UI_PORT").close()  # fail early if taken
    if not settings.offline:
        _warn_missing_keys(settings)
    api_host, api_port = api_sock.getsockname()[:2]
    api_url = f"http://{api_host}:{api_port}"
    server = uvicorn.Server(uvicorn_config(create_app(settings)))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [api_sock]}, daemon=True)
    thread.start()
    signal.signal(signal.SIGTERM, _exit_on_signal)
    ui = start_ui(
        api_url=api_url,
        ui_port=settings.ui_port,
        host=settings.api_host,
        api_token=settings.api_token,
    )
    label = "offline tutor" if settings.offline else settings.model_label
    print(
        f"harness: API {api_url} · UI http://{settings.api_host}:{settings.ui_port}"
        f" ({label}). The first start compiles the UI (about a minute). Ctrl-C stops both.",
        flush=True,
    )
    try:
        return ui.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        if ui.poll() is None:
            ui.terminate()
            try:
                ui.wait(timeout=10)
            except Exception:
                ui.kill()
        server.should_exit = True
        thread.join(timeout=10)


def cmd_graph(args: argparse.Namespace) -> int:
    import anyio

    from backend.server.graph_service import GraphReader
    from backend.server.settings import load_settings
    from backend.server.stores import read_graph

    settings = load_settings()
    data_dir = existing_data_dir(settings.data_dir)

    # reads only: a torn or corrupt tail stays for `verify` to report
    async def stats() -> GraphStats:
        return (await GraphReader(read_graph(data_dir)).snapshot()).stats

    s = anyio.run(stats)
    print(f"nodes {s.nodes}  edges {s.edges}  events {s.events}  sessions {s.sessions}")
    for state, count in sorted(s.by_state.items()):
        print(f"  {state:<14}{count}")
    if s.unattributed_probes:
        print(f"  unattributed probes: {s.unattributed_probes}")
    if not s.nodes:
        print("the graph is empty: a lesson adds to it (`harness run`, then take one)")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from backend.server.settings import load_settings
    from backend.server.stores import verify

    settings = load_settings()
    problems = verify(existing_data_dir(settings.data_dir))
    for problem in problems:
        print(problem)
    print(f"verify: {len(problems)} problem(s) in {settings.data_dir}")
    return 1 if problems else 0


def _data_dir_line(data: Path) -> tuple[bool, str]:
    """(usable, what the doctor says about the data dir): what `serve` would say of it."""
    if not data.exists():
        parent = next(p for p in data.resolve().parents if p.exists())
        if os.access(parent, os.W_OK):
            return True, "not created yet: `harness serve` or `harness run` creates it"
        return False, f"missing, and {parent} is not writable: set LH_DATA_DIR"
    try:
        writable_data_dir(data)
    except CliError as exc:
        return False, str(exc)
    chats = data / "chats"
    count = sum(n.endswith(".json") for n in os.listdir(chats)) if chats.is_dir() else 0
    return True, f"writable, {count} chat(s)"


def cmd_doctor(args: argparse.Namespace) -> int:
    from backend.server.settings import SettingsError, load_settings
    from backend.server.stores import verify

    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"settings    {exc}")
        return 1

    def line(label: str, text: str) -> None:
        print(f"{label:<12}{text}", flush=True)

    line("model", f"{settings.model_label}{' (offline tutor)' if settings.offline else ''}")
    for label, role in (
        ("extractor", "extractor_model"),
        ("auditor", "auditor_model"),
        ("sub-agents", "subagent_model"),
    ):
        line(label, getattr(settings, role) or "offline")
    line("api", f"http://{settings.api_host}:{settings.api_port} · UI port {settings.ui_port}")
    line("token", "required" if settings.api_token else "not set")
    data = settings.data_dir
    data_ok, data_text = _data_dir_line(data)
    line("data dir", f"{data.resolve()} ({data_text})")
    records_ok = True
    if data.is_dir():
        problems = verify(data)
        records_ok = not problems
        line(
            "records",
            "sound" if records_ok else f"{len(problems)} problem(s): `harness verify` lists them",
        )
    model_ok = True
    if not settings.offline:
        from backend.server.models import check_model

        line("probe", f"asking {settings.model} for one token (up to {MODEL_PROBE_SECONDS} s)…")
        model_ok, detail = check_model(settings)
        line("reachable", f"yes — {detail}" if model_ok else f"no — {detail}")
        if not model_ok:
            line("", f"→ {model_hint(settings.model or '', detail)}")
    return 0 if data_ok and records_ok and model_ok else 1


def _recorded_turns(data_dir: Path, chat_id: str) -> list[int]:
    """The turns recorded in `chat_id`'s trace (raises InvalidId for a malformed id)."""
    import anyio

    from backend.server.stores import build_stores
    from shared_contracts.trace import MarkEvent

    async def read() -> list[AnyTraceEvent]:
        return await build_stores(data_dir).traces.read(chat_id)

    events = anyio.run(read)
    return [e.turn for e in events if isinstance(e, MarkEvent) and e.mark == "turn_started"]


def _check_replay_args(args: argparse.Namespace, data_dir: Path) -> None:
    """Refuse arguments the replay engine would silently ignore or misread."""
    diff = args.ids[0] == "diff"
    if diff and (args.from_turn is not None or args.model or args.template):
        raise CliError("`replay diff A B` takes no --from-turn, --model or --template")
    if args.model and args.from_turn is None:
        raise CliError("--model is the fork's teacher: use it with --from-turn N")
    if args.template and not Path(args.template).is_file():
        raise CliError(f"--template {args.template}: no such file")
    turns: list[int] = []
    for chat_id in args.ids[1:] if diff else args.ids[:1]:
        turns = _recorded_turns(data_dir, chat_id)
        if not turns:
            raise CliError(
                f"no recorded session {chat_id!r} in {data_dir}; a chat id is a file name"
                f" in {data_dir / 'traces'} without .jsonl"
            )
    if args.from_turn is not None and not 1 <= args.from_turn <= max(turns):
        raise CliError(f"--from-turn {args.from_turn}: {args.ids[0]} has turns 1 to {max(turns)}")


def cmd_replay(args: argparse.Namespace) -> int:
    from backend.core.errors import HarnessError
    from backend.replay.cli import cli
    from backend.server.settings import load_settings

    settings = load_settings()
    data_dir = existing_data_dir(settings.data_dir)
    template = Path(args.template) if args.template else None
    try:
        _check_replay_args(args, data_dir)
        return cli(data_dir, args.ids, args.from_turn, args.model, template)
    except HarnessError as exc:
        print(f"harness replay: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness",
        description="The Learning Harness: a tutor's API and UI, and tools over its data.",
        epilog=SETTINGS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str, details: str, fn: Command) -> argparse.ArgumentParser:
        cmd = sub.add_parser(
            name,
            help=summary,
            description=f"{summary}.\n\n{details}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        cmd.set_defaults(fn=fn)
        return cmd

    command(
        "serve",
        "the API alone",
        "Binds LH_API_HOST:LH_API_PORT (default 127.0.0.1:8100) and keeps its data in"
        "\nLH_DATA_DIR (created if missing). Ctrl-C stops it.",
        cmd_serve,
    )
    command(
        "run",
        "API + Reflex UI together",
        "The API as `serve`, and the UI on http://127.0.0.1:LH_UI_PORT (default 3000)."
        "\nThe first start compiles the UI (about a minute). Ctrl-C stops both.",
        cmd_run,
    )
    command(
        "graph",
        "graph stats",
        "Nodes by state, edges, events and sessions of the knowledge graph in LH_DATA_DIR.",
        cmd_graph,
    )
    command(
        "doctor",
        "config, model reachability, data-dir health",
        "Prints the settings in effect, asks the configured model for one token (up to"
        f"\n{MODEL_PROBE_SECONDS} s) and checks the data dir. Exit 0 when all is well, else 1.",
        cmd_doctor,
    )
    command(
        "verify",
        "decode every record and ledger line, check invariants",
        "Reads LH_DATA_DIR without writing. Exit 0 when sound, 1 with one line per problem.",
        cmd_verify,
    )
    replay = command(
        "replay",
        "re-run a recorded session strictly, fork it, or diff two",
        "harness replay CHAT_ID                          exit 0 when identical, else 1 and"
        "\n                                                the first divergence"
        "\nharness replay CHAT_ID --from-turn N --model M  strict before turn N, then live"
        "\n                                                on M: a new chat in LH_DATA_DIR"
        "\nharness replay diff A B                         per-turn differences (exit 1 if any)"
        "\n\nA chat id is a file name in LH_DATA_DIR/traces without .jsonl (chat-…).",
        cmd_replay,
    )
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from backend.server.settings import SettingsError

    args = _parser().parse_args(argv)
    # the servers log their work; the one-shot tools print only their answer
    _logging("INFO" if args.command in ("serve", "run") else "WARNING")
    _export_dotenv_provider_keys()
    try:
        fn: Command = args.fn
        return fn(args)
    except (CliError, SettingsError) as exc:
        print(f"harness {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
