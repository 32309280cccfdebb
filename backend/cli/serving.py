"""`harness serve` (the API) and `harness run` (API + UI): ports bound before anything
starts, the project's uvicorn settings."""

from __future__ import annotations

import argparse
import errno
import socket
from typing import TYPE_CHECKING, Any

from backend.cli.data import writable_data_dir
from backend.cli.doctor import warn_missing_keys
from backend.cli.errors import CliError, PortInUse, database_errors

if TYPE_CHECKING:  # imported where used: `harness --help` must not pay for them
    import uvicorn

    from backend.server.settings import Settings
    from backend.server.stores import DataDirLock

MAX_INBOUND_WS_BYTES = 64 * 1024


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


def ready_stores(settings: Settings) -> DataDirLock | None:
    """Where the data lives, checked before the server starts: the data dir writable and,
    on files, locked for this process while the caller keeps the lock (no second server,
    import or migrate writes beside it); with LH_DATABASE_URL the database reachable and
    migrated. Else one line, exit 2."""
    writable_data_dir(settings.data_dir)
    if settings.database_url is None:
        from backend.server.stores import DataDirInUse, DataDirLock

        try:
            return DataDirLock(settings.data_dir)
        except DataDirInUse as exc:
            raise CliError(str(exc)) from None
    if settings.database_url is not None:
        import anyio

        from backend.server.stores import check_database

        with database_errors(settings.database_label):
            anyio.run(check_database, settings.database_url)
    return None


def serving_workers(settings: Settings, asked: int | None) -> int:
    """How many API processes to start: `--workers`, else LH_WORKERS. More than one share
    the database: with files, one line saying so (exit 2)."""
    workers = settings.workers if asked is None else asked
    if workers < 1:
        raise CliError(f"--workers {workers}: at least 1")
    if workers > 1 and settings.database_url is None:
        raise CliError(
            f"{workers} workers need LH_DATABASE_URL (postgresql://...): processes share a"
            " database, never the files under LH_DATA_DIR; set it, or serve with one worker"
        )
    return workers


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from backend.server.app import create_app
    from backend.server.settings import check_exposure, load_settings

    settings = load_settings()
    check_exposure(settings)  # before anything binds: one line, exit 2
    workers = serving_workers(settings, getattr(args, "workers", None))
    # the schema is migrated once, before any worker starts; files are locked (one worker)
    held = ready_stores(settings)
    sock = bind(settings.api_host, settings.api_port)
    host, port = sock.getsockname()[:2]
    label = "offline tutor" if settings.offline else settings.model_label
    if not settings.offline:
        warn_missing_keys(settings)
    processes = f"; {workers} workers" if workers > 1 else ""
    where = f"{label}; {settings.database_label}; LH_AUTH={settings.auth}{processes}"
    print(f"harness API on http://{host}:{port} ({where})", flush=True)
    if workers == 1:
        try:
            uvicorn.Server(uvicorn_config(create_app(settings))).run(sockets=[sock])
        finally:
            if held is not None:
                held.release()
        return 0
    from uvicorn.supervisors import Multiprocess

    config = uvicorn_config(f"{__name__}:worker_app", factory=True, workers=workers)
    Multiprocess(config, sockets=[sock]).run()
    return 0


def worker_app() -> Any:
    """One of `harness serve --workers N`'s processes (spawned: it reads the settings from
    the environment it inherited, and logs as `harness` does)."""
    import logging
    import sys

    from backend.server.app import create_app

    logging.basicConfig(
        level="INFO", format="%(asctime)s %(levelname)s %(name)s %(message)s", stream=sys.stderr
    )
    return create_app()


def _exit_on_signal(signum: int, frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C, so `finally` blocks stop the child processes."""
    raise SystemExit(128 + signum)


def refuse_what_run_cannot_serve(settings: Settings, loopback: str) -> None:
    """`harness run` is one learner's app on this machine: a public API host, a UI port
    chosen at random or several workers are `harness serve`'s (one line, exit 2)."""
    if settings.api_host not in (loopback, "localhost"):
        raise CliError(
            f"LH_API_HOST={settings.api_host}: `harness run` serves the UI on {loopback}"
            " only; unset LH_API_HOST, or use `harness serve` to expose the API alone"
        )
    if settings.ui_port == 0:
        raise CliError("LH_UI_PORT=0: `harness run` needs a fixed UI port to print; pick one")
    if settings.workers > 1:
        raise CliError(
            f"LH_WORKERS={settings.workers}: `harness run` is one learner's app in one API"
            " process; unset LH_WORKERS, or start several with `harness serve` (and the UI"
            " beside it)"
        )


def cmd_run(args: argparse.Namespace) -> int:
    import signal
    import threading

    import uvicorn

    from backend.cli.ui import LOOPBACK, start_ui
    from backend.server.app import create_app
    from backend.server.settings import load_settings

    settings = load_settings()
    refuse_what_run_cannot_serve(settings, LOOPBACK)
    held = ready_stores(settings)  # the data dir stays locked while this process serves it
    api_sock = bind(settings.api_host, settings.api_port)
    bind(settings.api_host, settings.ui_port, "LH_UI_PORT").close()  # fail early if taken
    if not settings.offline:
        warn_missing_keys(settings)
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
        if held is not None:
            held.release()
