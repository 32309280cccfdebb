"""Compare two schema snapshots and say, per type and field, what changed and whether an
older peer could still read and write the new shape (backward compatible) or not."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

DOC_KEYS = frozenset({"title", "description", "examples"})
"""Type-level keys that only document: changing them never breaks a peer."""


@dataclass(frozen=True, slots=True)
class Change:
    """One difference: `where` is `Type` or `Type.field`; `compatible` says if old peers cope."""

    where: str
    what: str
    compatible: bool

    def line(self) -> str:
        verdict = "compatible" if self.compatible else "BREAKING"
        return f"{self.where}: {verdict} - {self.what}"


def _short(schema: Any, limit: int = 160) -> str:
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _field_changes(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    changes: list[Change] = []
    old_props, new_props = old.get("properties", {}), new.get("properties", {})
    old_req, new_req = set(old.get("required", [])), set(new.get("required", []))
    for field in sorted(new_props.keys() - old_props.keys()):
        if field in new_req:
            changes.append(
                Change(f"{name}.{field}", "new REQUIRED field (give it a default)", False)
            )
        else:
            changes.append(Change(f"{name}.{field}", "new field with a default", True))
    for field in sorted(old_props.keys() - new_props.keys()):
        changes.append(Change(f"{name}.{field}", "field removed", False))
    for field in sorted(old_props.keys() & new_props.keys()):
        before, after = old_props[field], new_props[field]
        was_req, is_req = field in old_req, field in new_req
        if before == after and was_req == is_req:
            continue
        where = f"{name}.{field}"
        stripped_before = {k: v for k, v in before.items() if k != "default"}
        stripped_after = {k: v for k, v in after.items() if k != "default"}
        if stripped_before == stripped_after and was_req and not is_req:
            changes.append(Change(where, "required field now has a default", True))
        elif stripped_before == stripped_after and not was_req and is_req:
            changes.append(Change(where, "field became required (default removed)", False))
        elif stripped_before == stripped_after:
            old_default, new_default = _short(before.get("default")), _short(after.get("default"))
            what = f"default changed: {old_default} -> {new_default}"
            changes.append(Change(where, what, False))
        else:
            what = f"type/annotation changed: {_short(before)} -> {_short(after)}"
            changes.append(Change(where, what, False))
    for key in sorted((old.keys() | new.keys()) - {"properties", "required"}):
        if old.get(key) != new.get(key):
            what = f"`{key}` changed: {_short(old.get(key))} -> {_short(new.get(key))}"
            changes.append(Change(name, what, key in DOC_KEYS))
    return changes


def _union_changes(old: dict[str, list], new: dict[str, list]) -> list[Change]:
    changes: list[Change] = []
    for name in sorted(old.keys() | new.keys()):
        if name not in new:
            changes.append(Change(name, "union removed", False))
            continue
        if name not in old:
            changes.append(Change(name, "new union", True))
            continue
        before = {_short(m) for m in old[name]}
        after = {_short(m) for m in new[name]}
        for member in sorted(after - before):
            what = f"new member {member} (every reader of {name} must handle it)"
            changes.append(Change(name, what, True))
        for member in sorted(before - after):
            changes.append(Change(name, f"member removed {member}", False))
    return changes


def diff_snapshots(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Every change from `old` to `new` (both as `build_snapshot()` returns them)."""
    old_defs, new_defs = old.get("$defs", {}), new.get("$defs", {})
    changes: list[Change] = []
    for name in sorted(new_defs.keys() - old_defs.keys()):
        changes.append(Change(name, "new type", True))
    for name in sorted(old_defs.keys() - new_defs.keys()):
        changes.append(Change(name, "type removed", False))
    for name in sorted(old_defs.keys() & new_defs.keys()):
        changes.extend(_field_changes(name, old_defs[name], new_defs[name]))
    changes.extend(_union_changes(old.get("unions", {}), new.get("unions", {})))
    return changes


def describe(changes: list[Change], snapshot_path: str) -> str:
    """The failure message: breaking changes first, then the way to accept the change."""
    breaking = [c for c in changes if not c.compatible]
    compatible = [c for c in changes if c.compatible]
    lines = [
        f"shared_contracts no longer match {snapshot_path}: "
        f"{len(breaking)} breaking, {len(compatible)} compatible change(s)",
        *(f"  {c.line()}" for c in [*breaking, *compatible]),
        "If intended: run `make schema` and commit the snapshot. A breaking change to a",
        "stored record also needs a new fixture set in tests/contract/fixtures/.",
    ]
    return "\n".join(lines)
