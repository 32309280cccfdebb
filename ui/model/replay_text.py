"""Text helpers of the replay page: recorded text is shown as text, cut to a size a page
can hold, JSON re-indented for reading."""

from __future__ import annotations

import json
from typing import Any

import msgspec

MAX_TEXT = 60_000
LABEL_CHARS = 90


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """`text`, cut at `limit` characters with a note saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters)"


def one_line(text: str, limit: int = LABEL_CHARS) -> str:
    """The first line-ish of `text`, whitespace collapsed, for a timeline label."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def pretty(text: str) -> str:
    """JSON text re-indented for reading (formatted, never decoded); anything else unchanged."""
    try:
        return msgspec.json.format(text, indent=2)
    except (msgspec.DecodeError, TypeError):
        return text


def as_json(value: Any) -> str:
    return json.dumps(msgspec.to_builtins(value), indent=2, ensure_ascii=False)


def split_prompt(system_prompt: str, graph_context: str) -> tuple[str, str, str]:
    """(before, graph context, after): the context block as it appears in the prompt."""
    block = graph_context.strip()
    at = system_prompt.find(block) if block else -1
    if at < 0:
        return system_prompt, "", ""
    return system_prompt[:at], block, system_prompt[at + len(block) :]
