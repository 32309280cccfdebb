"""Where a replay first differs from its recording, readably: both versions and a diff."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import msgspec

from shared_contracts.model_io import ModelRequest

PRETTY = msgspec.json.Encoder(order="sorted")


@dataclass(frozen=True)
class Divergence:
    """Where a replay first differs: the recorded event (by seq) and both versions."""

    seq: int
    where: str
    recorded: str
    replayed: str
    diff: str

    def render(self) -> str:
        return (
            f"FIRST DIVERGENCE at recorded event #{self.seq}: {self.where}\n"
            f"--- recorded\n{clip(self.recorded)}\n"
            f"+++ replayed\n{clip(self.replayed)}\n"
            f"diff:\n{self.diff}"
        )


def request_text(request: ModelRequest) -> str:
    """A model request as readable lines (for a divergence's diff)."""
    lines = [f"role: {request.role}  tools: {', '.join(t.name for t in request.tools)}"]
    for message in request.messages:
        lines.append(
            f"[{message.role}{' ' + message.tool_call_id if message.tool_call_id else ''}]"
        )
        lines.extend(message.content.splitlines() or [""])
        for call in message.tool_calls:
            lines.append(f"  -> {call.name}({call.arguments}) {call.id}")
    if request.response_schema is not None:
        lines.append("response_schema: " + PRETTY.encode(request.response_schema).decode())
    return "\n".join(lines)


def udiff(a: str, b: str, label: str = "event") -> str:
    """A unified diff of recorded `a` and replayed `b` (or a note that no line differs)."""
    lines = difflib.unified_diff(
        a.splitlines(), b.splitlines(), f"recorded {label}", f"replayed {label}", lineterm="", n=2
    )
    return "\n".join(lines) or "(no line differences)"


def clip(text: str, limit: int = 3000) -> str:
    """`text`, cut at `limit` characters with a note of how much was left out."""
    return (
        text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"
    )
