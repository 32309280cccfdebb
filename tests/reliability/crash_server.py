"""`harness serve` with a crashing `FileOps` injected: the server the crash-recovery tests
kill at an exact file operation. `python -m tests.reliability.crash_server op[@path]:n`
(settings from the environment, as `harness serve` reads them)."""

from __future__ import annotations

import logging
import sys

import uvicorn

from backend.cli.data import writable_data_dir
from backend.cli.serving import bind, uvicorn_config
from backend.server.app import create_app
from backend.server.settings import load_settings
from backend.server.stores import build_stores
from tests.reliability.crashing_fileops import CrashingFileOps


def main(spec: str) -> int:
    logging.basicConfig(level="INFO", stream=sys.stderr)
    fs = CrashingFileOps.from_spec(spec)
    settings = load_settings()
    writable_data_dir(settings.data_dir)
    sock = bind(settings.api_host, settings.api_port)
    host, port = sock.getsockname()[:2]
    print(f"harness API on http://{host}:{port} (crashes at {spec})", flush=True)
    app = create_app(settings, stores=build_stores(settings.data_dir, fs=fs))
    uvicorn.Server(uvicorn_config(app)).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
