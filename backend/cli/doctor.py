"""`harness doctor`, and the provider-key hints `serve` and `run` print too."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from backend.cli.data import writable_data_dir
from backend.cli.errors import CliError

if TYPE_CHECKING:  # imported where used: `harness --help` must not pay for them
    from backend.server.settings import Settings

log = logging.getLogger("harness.cli")
MODEL_PROBE_SECONDS = 15


def missing_provider_keys(model: str) -> list[str]:
    """The `*_KEY` variables litellm wants for `model` and does not find (a hint only)."""
    import contextlib
    import io

    import litellm

    with contextlib.redirect_stdout(io.StringIO()):  # litellm prints a provider list
        try:
            found = litellm.validate_environment(model=model)
        except Exception as exc:  # a hint only: no hint rather than a traceback
            log.debug("litellm could not check %s's keys: %s", model, exc)
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


def warn_missing_keys(settings: Settings) -> None:
    """A warning on stderr for each configured model whose provider key is not set."""
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
    if settings.database_url is None:
        problems = verify(data) if data.is_dir() else []
    else:
        line("database", settings.database_label)
        reachable, problems = _database_problems(settings.database_url, line)
        data_ok = data_ok and reachable
    records_ok = not problems
    if data.is_dir() or settings.database_url is not None:
        line(
            "records",
            "sound" if records_ok else f"{len(problems)} problem(s): `harness verify` lists them",
        )
    model_ok = True
    if not settings.offline:
        line("probe", f"asking {settings.model} for one token (up to {MODEL_PROBE_SECONDS} s)…")
        model_ok, detail = check_model(settings.model or "")
        line("reachable", f"yes — {detail}" if model_ok else f"no — {detail}")
        if not model_ok:
            line("", f"→ {model_hint(settings.model or '', detail)}")
    return 0 if data_ok and records_ok and model_ok else 1


def _database_problems(url: str, line: Callable[[str, str], None]) -> tuple[bool, list[str]]:
    """(reachable, what `harness verify` would report), saying why when unreachable."""
    import anyio

    from backend.server.stores import DatabaseError, SchemaTooNew, verify_database_at

    try:
        return True, anyio.run(verify_database_at, url)
    except (DatabaseError, SchemaTooNew) as exc:
        line("reachable", f"no — {exc}")
        return False, []


def check_model(model: str) -> tuple[bool, str]:
    """A one-token call to `model` (at most `MODEL_PROBE_SECONDS`): (answered, detail)."""
    import anyio

    from backend.agent.litellm_model import LitellmChatModel
    from shared_contracts.model_io import ModelMessage, ModelRequest

    probe = LitellmChatModel(model, max_attempts=1, timeout=MODEL_PROBE_SECONDS)
    request = ModelRequest(
        role="teacher", messages=[ModelMessage(role="user", content="Say OK.")], max_tokens=5
    )

    async def ping() -> str:
        async for _ in probe.stream(request):
            pass
        return "answered"

    try:
        return True, anyio.run(ping)
    except Exception as exc:
        return False, str(exc)[:200]
