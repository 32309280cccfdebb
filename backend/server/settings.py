"""Settings, read once at the composition root from the environment (or a `.env` file)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec


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

    @property
    def offline(self) -> bool:
        return not self.model

    @property
    def model_label(self) -> str:
        return self.model or "offline"

    def allowed_origins(self) -> frozenset[str]:
        ports = {self.ui_port, self.api_port}
        hosts = {"127.0.0.1", "localhost", self.api_host}
        return frozenset(
            {f"http://{h}:{p}" for h in hosts for p in ports} | set(self.extra_origins)
        )


def _read_dotenv(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    if not path.is_file():
        return values
    for line in path.read_text("utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip().strip("'\"")
    return values


def _int(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise SettingsError(f"{name} must be between {low} and {high}, got {value}")
    return value


def load_settings(env: Mapping[str, str] | None = None, dotenv: Path | None = None) -> Settings:
    """Environment wins over `.env`; unset or empty values take the defaults."""
    source = {**_read_dotenv(dotenv or Path(".env")), **(os.environ if env is None else env)}

    def text(name: str) -> str | None:
        value = source.get(name, "").strip()
        return value or None

    model = text("LH_MODEL")
    return Settings(
        model=model,
        extractor_model=text("LH_EXTRACTOR_MODEL") or model,
        auditor_model=text("LH_AUDITOR_MODEL") or model,
        subagent_model=text("LH_SUBAGENT_MODEL") or model,
        data_dir=Path(text("LH_DATA_DIR") or "data"),
        api_host=text("LH_API_HOST") or "127.0.0.1",
        api_port=_int(source, "LH_API_PORT", 8100, 0, 65535),
        ui_port=_int(source, "LH_UI_PORT", 3000, 0, 65535),
        every_n_quiz_answers=_int(source, "LH_EVERY_N_QUIZ_ANSWERS", 3, 1, 1000),
        api_token=text("LH_API_TOKEN"),
        extra_origins=tuple(
            o.strip() for o in (text("LH_ALLOWED_ORIGINS") or "").split(",") if o.strip()
        ),
        max_steps=_int(source, "LH_MAX_STEPS", 12, 1, 100),
    )
