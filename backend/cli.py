"""`harness`: serve | run | graph | doctor | verify | replay."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import socket
import sys
from collections.abc import Sequence

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")

MAX_INBOUND_WS_BYTES = 64 * 1024


class PortInUse(SystemExit):
    pass


def bind(host: str, port: int) -> socket.socket:
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
                f" or choose another port (LH_API_PORT / LH_UI_PORT)."
            ) from None
        raise SystemExit(f"harness: cannot bind {host}:{port}: {exc.strerror}") from None
    return sock


def _logging(level: str = "INFO") -> None:
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s %(message)s", stream=sys.stderr
    )


def uvicorn_config(app, **extra):
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


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from backend.server.app import create_app
    from backend.server.settings import load_settings

    settings = load_settings()
    sock = bind(settings.api_host, settings.api_port)
    host, port = sock.getsockname()[:2]
    label = "offline tutor" if settings.offline else settings.model_label
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
    from backend.server.ui_launcher import start_ui

    settings = load_settings()
    api_sock = bind(settings.api_host, settings.api_port)
    bind(settings.api_host, settings.ui_port).close()  # fail early if the UI port is taken
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
    from backend.server.stores import build_stores

    settings = load_settings()

    async def stats():
        return (await GraphReader(build_stores(settings.data_dir).graph).snapshot()).stats

    s = anyio.run(stats)
    print(f"nodes {s.nodes}  edges {s.edges}  events {s.events}  sessions {s.sessions}")
    for state, count in sorted(s.by_state.items()):
        print(f"  {state:<14}{count}")
    if s.unattributed_probes:
        print(f"  unattributed probes: {s.unattributed_probes}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from backend.server.settings import load_settings
    from backend.server.stores import verify

    settings = load_settings()
    problems = verify(settings.data_dir)
    for problem in problems:
        print(problem)
    print(f"verify: {len(problems)} problem(s) in {settings.data_dir}")
    return 1 if problems else 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from backend.server.settings import SettingsError, load_settings

    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"settings: {exc}")
        return 1
    print(f"model:     {settings.model_label}{' (offline tutor)' if settings.offline else ''}")
    for role in ("extractor_model", "auditor_model", "subagent_model"):
        print(f"{role:<10} {getattr(settings, role) or 'offline'}")
    print(f"api:       http://{settings.api_host}:{settings.api_port}  ui port {settings.ui_port}")
    print(f"token:     {'required' if settings.api_token else 'not set'}")
    data = settings.data_dir
    writable = data.exists() and os.access(data, os.W_OK)
    print(f"data dir:  {data.resolve()} ({'writable' if writable else 'missing or read-only'})")
    ok = True
    if not settings.offline:
        from backend.server.models import check_model

        ok, detail = check_model(settings)
        print(f"reachable: {'yes' if ok else 'no'} — {detail}")
    return 0 if ok and writable else 1


def cmd_replay(args: argparse.Namespace) -> int:
    from pathlib import Path

    from backend.core.errors import HarnessError
    from backend.server.replay import cli
    from backend.server.settings import load_settings

    settings = load_settings()
    template = Path(args.template) if args.template else None
    try:
        return cli(settings.data_dir, args.ids, args.from_turn, args.model, template)
    except HarnessError as exc:
        print(f"harness replay: {exc}")
        return 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="harness", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", help="the API alone").set_defaults(fn=cmd_serve)
    sub.add_parser("run", help="API + Reflex UI").set_defaults(fn=cmd_run)
    sub.add_parser("graph", help="graph stats").set_defaults(fn=cmd_graph)
    sub.add_parser("doctor", help="config, model reachability, data dir").set_defaults(
        fn=cmd_doctor
    )
    sub.add_parser("verify", help="decode every record, check invariants").set_defaults(
        fn=cmd_verify
    )
    replay = sub.add_parser(
        "replay",
        help="re-run a recorded session strictly (exit 0 when identical), fork it, or diff two",
        description="harness replay CHAT_ID [--from-turn N --model M] | harness replay diff A B",
    )
    replay.add_argument("ids", nargs="+", metavar="CHAT_ID", help="a chat id, or: diff A B")
    replay.add_argument("--from-turn", type=int, help="fork: strict before turn N, then live")
    replay.add_argument("--model", help="the fork's teacher: a litellm model string or offline")
    replay.add_argument("--template", help="replay with this teacher prompt template file")
    replay.set_defaults(fn=cmd_replay)
    args = parser.parse_args(argv)
    _logging()
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
