"""1. The committed JSON Schema snapshot equals the one the current contracts generate."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import msgspec

from shared_contracts.chat import ChatSummary
from shared_contracts.snapshot import build_snapshot, contract_types, contract_unions
from tests.contract.schema_diff import Change, describe, diff_snapshots

SNAPSHOT = Path(__file__).with_name("schema_snapshot.json")


def committed() -> dict:
    return json.loads(SNAPSHOT.read_text("utf-8"))


def test_the_contracts_match_the_committed_snapshot():
    changes = diff_snapshots(committed(), build_snapshot())
    assert not changes, describe(changes, "tests/contract/schema_snapshot.json")


def test_the_snapshot_covers_every_struct_and_frame_union():
    defs = committed()["$defs"]
    missing = [t.__name__ for t in contract_types() if t.__name__ not in defs]
    assert not missing, f"types missing from the snapshot: {missing}"
    assert {"ClientFrame", "ServerFrame"} <= contract_unions().keys()


# --- the differ itself --------------------------------------------------------------


def mutated(change) -> list[Change]:
    old = committed()
    new = copy.deepcopy(old)
    change(new["$defs"], new["unions"])
    return diff_snapshots(old, new)


def test_differ_a_new_field_with_a_default_is_compatible():
    def add(defs, _):
        defs["ChatView"]["properties"]["mood"] = {"type": "string", "default": ""}

    assert mutated(add) == [Change("ChatView.mood", "new field with a default", True)]


def test_differ_a_new_required_field_is_breaking():
    def add(defs, _):
        defs["UserMessage"]["properties"]["mood"] = {"type": "string"}
        defs["UserMessage"]["required"].append("mood")

    [change] = mutated(add)
    assert change.where == "UserMessage.mood" and not change.compatible
    assert "REQUIRED" in change.what


def test_differ_a_removed_field_is_breaking():
    def remove(defs, _):
        del defs["Answer"]["properties"]["confidence"]

    assert mutated(remove) == [Change("Answer.confidence", "field removed", False)]


def test_differ_a_changed_annotation_is_breaking_and_names_the_field():
    def narrow(defs, _):
        defs["UserMessage"]["properties"]["text"]["maxLength"] = 100

    [change] = mutated(narrow)
    assert change.where == "UserMessage.text" and not change.compatible
    message = describe([change], "snap.json")
    assert "UserMessage.text: BREAKING" in message and '"maxLength":100' in message


def test_differ_default_rules():
    def relax(defs, _):
        defs["TurnStarted"]["properties"]["turn_id"]["default"] = 0
        defs["TurnStarted"]["required"].remove("turn_id")
        defs["ChatView"]["required"].append("turns")
        del defs["ChatView"]["properties"]["turns"]["default"]

    changes = {c.where: c.compatible for c in mutated(relax)}
    assert changes == {"TurnStarted.turn_id": True, "ChatView.turns": False}


def test_differ_types_unions_and_documentation():
    def edit(defs, unions):
        defs["Brand"] = {"type": "object", "properties": {}}
        del defs["Pong"]
        defs["Ping"]["description"] = "keep-alive"
        defs["Ping"]["additionalProperties"] = True
        unions["ServerFrame"].append({"$ref": "#/$defs/Brand"})
        unions["ClientFrame"] = [m for m in unions["ClientFrame"] if "Abort" not in m["$ref"]]

    changes = {(c.where, c.what.split(" ")[0], c.compatible) for c in mutated(edit)}
    assert changes == {
        ("Brand", "new", True),
        ("Pong", "type", False),
        ("Ping", "`description`", True),
        ("Ping", "`additionalProperties`", False),
        ("ServerFrame", "new", True),
        ("ClientFrame", "member", False),
    }


def with_field_type(cls: type[msgspec.Struct], field: str, new_type) -> type[msgspec.Struct]:
    """A copy of `cls` (same name, fields and doc) whose `field` has another type."""
    fields = [
        (f.name, new_type if f.name == field else f.type, f.default)
        if f.default is not msgspec.NODEFAULT
        else (f.name, new_type if f.name == field else f.type)
        for f in msgspec.structs.fields(cls)
    ]
    clone = msgspec.defstruct(cls.__name__, fields, kw_only=True, frozen=True)
    clone.__doc__ = cls.__doc__
    return clone


def test_a_real_struct_change_is_reported_by_name():
    """The differ on a Struct changed in code (not a hand-edited dict) names that field."""
    changed = with_field_type(ChatSummary, "title", int)
    _, components = msgspec.json.schema_components([changed], ref_template="#/$defs/{name}")
    old = committed()
    new = copy.deepcopy(old)
    new["$defs"]["ChatSummary"] = components["ChatSummary"]
    breaking = [c for c in diff_snapshots(old, new) if not c.compatible]
    assert [c.where for c in breaking] == ["ChatSummary.title"]
