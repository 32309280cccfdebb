"""The JSON Schema snapshot of every contract (`make schema` writes it; a test compares)."""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path
from typing import Any

import msgspec

from shared_contracts import (
    chat,
    frames,
    graph,
    http,
    jobs,
    model_io,
    plan,
    questions,
    tools,
    trace,
)

MODULES = (chat, frames, graph, http, jobs, model_io, plan, questions, tools, trace)
UNIONS: dict[str, Any] = {
    "ClientFrame": frames.ClientFrame,
    "ServerFrame": frames.ServerFrame,
    "QuestionSpec": questions.QuestionSpec,
    "ToolOutput": tools.ToolOutput,
    "JobResult": jobs.JobResult,
    "ModelEvent": model_io.ModelEvent,
    "AnyTraceEvent": trace.AnyTraceEvent,
}


def contract_types() -> list[type[msgspec.Struct]]:
    """Every Struct defined in a contracts module, in a stable order."""
    found: dict[str, type[msgspec.Struct]] = {}
    for module in MODULES:
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, msgspec.Struct)
                and value.__module__ == module.__name__
            ):
                found[f"{module.__name__.rsplit('.', 1)[-1]}.{name}"] = value
    return [found[key] for key in sorted(found)]


def build_snapshot() -> dict[str, Any]:
    types = contract_types()
    _, components = msgspec.json.schema_components(
        [*types, *UNIONS.values()], ref_template="#/$defs/{name}"
    )
    unions = {name: msgspec.json.schema(union).get("anyOf", []) for name, union in UNIONS.items()}
    return {"$defs": dict(sorted(components.items())), "unions": unions}


def encode_snapshot(snapshot: dict[str, Any]) -> bytes:
    return msgspec.json.format(msgspec.json.encode(snapshot, order="sorted"), indent=2) + b"\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", type=Path, required=True, help="where to write the snapshot")
    args = parser.parse_args(argv)
    args.write.parent.mkdir(parents=True, exist_ok=True)
    args.write.write_bytes(encode_snapshot(build_snapshot()))
    print(f"wrote {args.write} ({len(contract_types())} types)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
