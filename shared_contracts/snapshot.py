"""The JSON Schema snapshot of every contract (`make schema` writes it; a test compares).

Every module of the package is covered automatically, so a new contracts module can not
slip past the snapshot; every module-level union of Structs is recorded with its members.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import sys
import types
from pathlib import Path
from typing import Any, get_args

import msgspec

import shared_contracts

NOT_CONTRACTS = frozenset({"base", "snapshot"})
"""`base` holds only the abstract Record/Body/Inbound roots; `snapshot` is this tool."""


def contract_modules() -> list[types.ModuleType]:
    """Every submodule of `shared_contracts` that defines contracts, sorted by name."""
    names = sorted(
        info.name
        for info in pkgutil.iter_modules(shared_contracts.__path__)
        if info.name not in NOT_CONTRACTS
    )
    return [importlib.import_module(f"shared_contracts.{name}") for name in names]


def _is_struct_union(value: Any) -> bool:
    members = [m for m in get_args(value) if m is not type(None)]
    return (
        isinstance(value, types.UnionType)
        and len(members) >= 2
        and all(inspect.isclass(m) and issubclass(m, msgspec.Struct) for m in members)
    )


def contract_types() -> list[type[msgspec.Struct]]:
    """Every Struct defined in a contracts module, in a stable order."""
    found: dict[str, type[msgspec.Struct]] = {}
    for module in contract_modules():
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, msgspec.Struct)
                and value.__module__ == module.__name__
            ):
                found[f"{module.__name__.rsplit('.', 1)[-1]}.{name}"] = value
    return [found[key] for key in sorted(found)]


def contract_unions() -> dict[str, Any]:
    """Every module-level union of Structs (e.g. `ClientFrame`), by name, sorted."""
    found: dict[str, Any] = {}
    for module in contract_modules():
        for name, value in vars(module).items():
            if not name.startswith("_") and _is_struct_union(value):
                found[name] = value
    return dict(sorted(found.items()))


def build_snapshot() -> dict[str, Any]:
    """`{"$defs": {struct name: JSON Schema}, "unions": {union name: [member refs]}}`."""
    unions = contract_unions()
    _, components = msgspec.json.schema_components(
        [*contract_types(), *unions.values()], ref_template="#/$defs/{name}"
    )
    members = {name: msgspec.json.schema(union).get("anyOf", []) for name, union in unions.items()}
    return {"$defs": dict(sorted(components.items())), "unions": members}


def encode_snapshot(snapshot: dict[str, Any]) -> bytes:
    """Stable bytes: sorted keys, two-space indent, final newline."""
    return msgspec.json.format(msgspec.json.encode(snapshot, order="sorted"), indent=2) + b"\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", type=Path, required=True, help="where to write the snapshot")
    args = parser.parse_args(argv)
    args.write.parent.mkdir(parents=True, exist_ok=True)
    args.write.write_bytes(encode_snapshot(build_snapshot()))
    print(f"wrote {args.write} ({len(contract_types())} types, {len(contract_unions())} unions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
