"""Settings, read once at the composition root from the environment (or a `.env` file)."""

from __future__ import annotations

import ipaddress
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

import msgspec

from backend.server.runtime import ClockFileError, read_clock_file


class SettingsError(ValueError):
    """A setting that cannot be used; the message names it."""


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    model: str | None = None
    extractor_model: str | None = None
    auditor_model: str | None = None
    subagent_model: str | None = None
    data_dir: Path = Path("data")
    api_host: str = "127.0.0.1"
    api_port: int = 8100
    ui_port: int = 3000
    every_n_quiz_answers: int = 3
    api_token: str | None = None
    extra_origins: tuple[str, ...] = ()
    max_steps: int = 12
    max_jobs_per_chat: int = 2
    max_jobs_global: int = 4
    job_timeout_s: float = 120.0
    ws_frames_per_second: float = 20.0
    ws_burst: int = 40
    database_url: str | None = None
    """`LH_DATABASE_URL`: unset, every store is files under `data_dir`; `postgresql://...`,
    every store is on that database. May hold a password: show `database_label`."""
    workers: int = 1
    """`LH_WORKERS`: API processes `harness serve` starts on one port (more than one needs
    `database_url`: the processes share the database, never files)."""
    desired_retention: float = 0.9
    """`LH_DESIRED_RETENTION`: the recall probability below which a proposition is due (and a
    verified one `fading`); FSRS schedules for it."""
    auth: Literal["local", "accounts"] = "local"
    """`LH_AUTH`: `local`, one learner with no login (loopback, or `LH_API_TOKEN`);
    `accounts`, every request belongs to a signed-in learner."""
    session_hours: int = 12
    """`LH_SESSION_HOURS`: how long a sign-in's token lasts."""
    material_max_mb: int = 20
    """The largest document `POST /api/materials` and `harness materials add` take."""
    clock_file: Path | None = None
    """Bench only (`LH_CLOCK_FILE`): the server's now is read from this file (`FileClock`).
    Set at start-up from the environment; no request can reach it."""

    @property
    def material_max_bytes(self) -> int:
        return self.material_max_mb * 1_000_000

    @property
    def offline(self) -> bool:
        return not self.model

    @property
    def model_label(self) -> str:
        return self.model or "offline"

    @property
    def database_label(self) -> str:
        """Where the data lives, fit to print: the database URL with any password hidden."""
        if self.database_url is None:
            return f"files in {self.data_dir}"
        return without_password(self.database_url)

    def allowed_origins(self) -> frozenset[str]:
        ports = {self.ui_port, self.api_port}
        hosts = {"127.0.0.1", "localhost", self.api_host}
        return frozenset(
            {f"http://{h}:{p}" for h in hosts for p in ports} | set(self.extra_origins)
        )


DEFAULTS = Settings()
"""The defaults, written once (in `Settings`): what an unset setting takes."""

DOTENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Source(dict[str, str]):
    """The merged settings, remembering which `.env` line each dotenv value came from."""

    def __init__(self, dotenv: Mapping[str, tuple[str, str]], environ: Mapping[str, str]):
        super().__init__({k: v for k, (v, _) in dotenv.items()} | dict(environ))
        self.origins = {k: where for k, (_, where) in dotenv.items() if k not in environ}

    def origin(self, name: str) -> str:
        return self.origins.get(name, "the environment")


def read_dotenv(path: Path) -> dict[str, tuple[str, str]]:
    """NAME → (value, "<path> line N"); `export NAME=value` and a trailing ` # comment` are
    read as a shell would; any other line that is not NAME=value is a SettingsError."""
    values: dict[str, tuple[str, str]] = {}
    if not path.is_file():
        return values
    for number, raw in enumerate(path.read_text("utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path} line {number}"
        key, equals, value = line.removeprefix("export ").partition("=")
        key, value = key.strip(), value.strip()
        if not equals or not DOTENV_NAME.match(key):
            raise SettingsError(f"{where}: expected NAME=value, got {raw.strip()!r}")
        if value[:1] in ("'", '"') and value[1:].find(value[0]) >= 0:
            value = value[1 : 1 + value[1:].find(value[0])]
        else:
            value = value.split(" #", 1)[0].strip().strip("'\"")
        values[key] = (value, where)
    return values


def _int(env: Source, name: str, default: int, low: int, high: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    value = int(raw) if raw.strip().lstrip("+-").isdigit() else None
    if value is None or not low <= value <= high:
        raise SettingsError(
            f"{name} must be a whole number from {low} to {high}, got {raw!r}"
            f" (from {env.origin(name)}); fix it or unset it for the default {default}"
        )
    return value


def _retention(env: Source, name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0.0 < value < 1.0:  # NaN fails too
        raise SettingsError(
            f"{name} must be a probability between 0 and 1 (exclusive) such as 0.9, got"
            f" {raw!r} (from {env.origin(name)}); fix it or unset it for the default {default}"
        )
    return value


def load_settings(env: Mapping[str, str] | None = None, dotenv: Path | None = None) -> Settings:
    """Environment wins over `.env`; unset or empty values take the defaults."""
    source = Source(read_dotenv(dotenv or Path(".env")), os.environ if env is None else env)

    def text(name: str) -> str | None:
        value = source.get(name, "").strip()
        return value or None

    model = text("LH_MODEL")
    default = DEFAULTS
    return Settings(
        model=model,
        extractor_model=text("LH_EXTRACTOR_MODEL") or model,
        auditor_model=text("LH_AUDITOR_MODEL") or model,
        subagent_model=text("LH_SUBAGENT_MODEL") or model,
        data_dir=Path(text("LH_DATA_DIR") or default.data_dir),
        api_host=text("LH_API_HOST") or default.api_host,
        api_port=_int(source, "LH_API_PORT", default.api_port, 0, 65535),
        ui_port=_int(source, "LH_UI_PORT", default.ui_port, 0, 65535),
        every_n_quiz_answers=_int(
            source, "LH_EVERY_N_QUIZ_ANSWERS", default.every_n_quiz_answers, 1, 1000
        ),
        api_token=text("LH_API_TOKEN"),
        extra_origins=tuple(
            o.strip() for o in (text("LH_ALLOWED_ORIGINS") or "").split(",") if o.strip()
        ),
        max_steps=_int(source, "LH_MAX_STEPS", default.max_steps, 1, 100),
        auth=_auth(source, text("LH_AUTH")),
        session_hours=_int(source, "LH_SESSION_HOURS", default.session_hours, 1, 24 * 90),
        database_url=_database_url(source, text("LH_DATABASE_URL")),
        workers=_int(source, "LH_WORKERS", default.workers, 1, MAX_WORKERS),
        desired_retention=_retention(source, "LH_DESIRED_RETENTION", default.desired_retention),
        material_max_mb=_int(source, "LH_MATERIAL_MAX_MB", default.material_max_mb, 1, 1000),
        clock_file=_clock_file(source, text("LH_CLOCK_FILE")),
    )


MAX_WORKERS = 64


def _auth(env: Source, raw: str | None) -> Literal["local", "accounts"]:
    if raw is None or raw == "local":
        return "local"
    if raw == "accounts":
        return "accounts"
    raise SettingsError(
        f"LH_AUTH must be local or accounts, got {raw!r} (from {env.origin('LH_AUTH')});"
        " unset it for one learner with no login"
    )


def is_loopback_host(host: str) -> bool:
    """Whether binding `host` keeps the API on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(settings: Settings) -> None:
    """Refuse what would open one learner's data to a network: `LH_AUTH=local` with no
    `LH_API_TOKEN` on a non-loopback host. With accounts, `LH_API_TOKEN` has no meaning
    (each learner signs in), so setting it is refused rather than silently ignored."""
    local, exposed = settings.auth == "local", not is_loopback_host(settings.api_host)
    if local and exposed and not settings.api_token:
        raise SettingsError(
            f"LH_API_HOST={settings.api_host} exposes the API beyond this machine, and"
            " LH_AUTH=local has no login: set LH_API_TOKEN (every client must then send"
            " it), use LH_AUTH=accounts, or unset LH_API_HOST to stay on 127.0.0.1"
        )
    if settings.auth == "accounts" and settings.api_token:
        raise SettingsError(
            "LH_API_TOKEN is for LH_AUTH=local; with LH_AUTH=accounts every learner signs in"
            " and sends their own token: unset LH_API_TOKEN"
        )


DATABASE_SCHEMES = ("postgresql://", "postgres://")


def without_password(url: str) -> str:
    """`url` with its password (if any) shown as ***."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def _database_url(env: Source, raw: str | None) -> str | None:
    """LH_DATABASE_URL: a PostgreSQL URL, or unset for files (its reachability is checked
    when the stores open: one line and exit 2, as for any setting)."""
    if raw is None:
        return None
    origin = env.origin("LH_DATABASE_URL")
    return database_url(
        raw,
        f"LH_DATABASE_URL (from {origin})",
        "unset it to keep the data in files under LH_DATA_DIR",
    )


def database_url(raw: str, what: str, instead: str) -> str:
    """`raw` if it is a PostgreSQL URL, else a SettingsError naming `what` (never echoing
    a password) and saying what to do `instead`."""
    if raw.startswith(DATABASE_SCHEMES) and (urlsplit(raw).hostname or "host=" in raw):
        return raw
    shown = raw if "@" not in raw else "…@" + raw.rpartition("@")[2]
    raise SettingsError(
        f"{what} must be a PostgreSQL URL like postgresql://user:password@host:5432/dbname,"
        f" got {shown!r}; {instead}"
    )


def _clock_file(env: Source, raw: str | None) -> Path | None:
    """LH_CLOCK_FILE, checked now: a bad file is one line at start-up, not a crashed turn."""
    if raw is None:
        return None
    try:
        read_clock_file(Path(raw))
    except ClockFileError as exc:
        raise SettingsError(
            f"LH_CLOCK_FILE (from {env.origin('LH_CLOCK_FILE')}): {exc}; it is for the "
            "pedagogy bench only, unset it to use the real time"
        ) from exc
    return Path(raw)
