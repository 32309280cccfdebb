"""A throwaway PostgreSQL cluster for tests: `initdb` and `postgres` under a temp dir, on a
free loopback port, as an unprivileged user when run as root (the server refuses root);
stopped by its pid. No test skips for want of it: a missing server fails, naming the
package to install.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

INSTALL = "apt-get install -y postgresql-15 (Debian; `make pg-deps` does it)"
UNPRIVILEGED = "nobody"  # who runs the server when the tests run as root (CI does)


class ClusterError(RuntimeError):
    pass


def server_bindir() -> Path:
    """The newest installed server's bin directory (Debian keeps one per major version)."""
    found = sorted(
        (Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/postgres")),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if not found:
        raise ClusterError(f"no PostgreSQL server is installed: {INSTALL}")
    return found[-1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgCluster:
    """`start()` → a running server; `url(db)`; `create_database()`; `stop()` / `restart()`."""

    def __init__(self, *, durable: bool = False) -> None:
        """`durable`: fsync as a production server does (tests leave it off: faster)."""
        self.durable = durable
        self.bindir = server_bindir()
        self.root = Path(tempfile.mkdtemp(prefix="lh-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self._created = 0
        self._user = pwd.getpwnam(UNPRIVILEGED) if os.geteuid() == 0 else None
        if self._user is not None:
            os.chown(self.root, self._user.pw_uid, self._user.pw_gid)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run_as(self) -> dict[str, object]:
        if self._user is None:
            return {}
        return {"user": self._user.pw_uid, "group": self._user.pw_gid, "extra_groups": []}

    def start(self) -> PgCluster:
        if not self.data.exists():
            subprocess.run(
                [str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres",
                 "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"],
                check=True, capture_output=True, cwd=self.root, **self._run_as(),  # type: ignore[call-overload]
            )  # fmt: skip
        log = open(self.root / "server.log", "ab")  # noqa: SIM115 - the server keeps it
        self.proc = subprocess.Popen(
            [str(self.bindir / "postgres"), "-D", str(self.data), "-p", str(self.port),
             "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.root}",
             "-c", f"fsync={'on' if self.durable else 'off'}",
             "-c", f"full_page_writes={'on' if self.durable else 'off'}",
             "-c", "max_connections=200"],
            stdout=log, stderr=log, cwd=self.root, **self._run_as(),  # type: ignore[call-overload]
        )  # fmt: skip
        log.close()
        self._wait_ready()
        return self

    def _wait_ready(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise ClusterError(f"postgres exited at start:\n{self.log_tail()}")
            try:
                with psycopg.connect(self.url(), connect_timeout=2):
                    return
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    tail = self.log_tail()
                    raise ClusterError(f"postgres not ready in {timeout_s}s:\n{tail}") from exc
                time.sleep(0.05)

    def stop(self) -> None:
        """Fast shutdown (SIGINT to the postmaster's pid): clients are disconnected."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def restart(self) -> None:
        self.stop()
        self.start()

    def create_database(self) -> str:
        """A new, empty database; its URL."""
        self._created += 1
        name = f"t{self._created}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]  # a counter, not input
        return self.url(name)

    def log_tail(self, lines: int = 20) -> str:
        with contextlib.suppress(OSError):
            return "\n".join((self.root / "server.log").read_text().splitlines()[-lines:])
        return ""

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
