"""6. Data written by earlier versions still loads, and derives to the same graph and chats."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from backend.server.stores import verify
from tests.contract.fixtures.derive import HERE, derived

SETS = sorted(p for p in HERE.iterdir() if p.is_dir() and p.name.startswith("v"))


def test_there_is_a_fixture_set():
    assert [p.name for p in SETS][:1] == ["v1"]


def _by_id(items: list[dict[str, Any]], key: str = "id") -> dict[str, Any]:
    return {str(item.get(key, i)): item for i, item in enumerate(items)}


def differences(expected: Any, actual: Any, where: str = "") -> list[str]:
    """Paths where two JSON values differ (lists of objects with ids compared by id). A key
    only `actual` has is a field derived since the set was written (say, a node's
    `memory`): an addition, not a difference; a key only `expected` has is one."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return [
            d
            for key in sorted(expected.keys())
            for d in differences(expected.get(key), actual.get(key), f"{where}.{key}")
        ]
    if isinstance(expected, list) and isinstance(actual, list):
        if all(isinstance(i, dict) and "id" in i for i in [*expected, *actual]) and expected:
            return differences(_by_id(expected), _by_id(actual), where)
        if len(expected) == len(actual):
            return [
                d
                for i, (e, a) in enumerate(zip(expected, actual, strict=True))
                for d in differences(e, a, f"{where}[{i}]")
            ]
    if expected != actual:
        return [f"{where or '$'}: expected {str(expected)[:120]!r}, now {str(actual)[:120]!r}"]
    return []


@pytest.fixture(params=SETS, ids=lambda p: p.name)
def fixture_set(request, tmp_path: Path) -> tuple[Path, Path]:
    """(the committed set, a copy of its data dir): opening stores may tidy a data dir,
    and the committed set must stay exactly as an earlier version wrote it."""
    copy = tmp_path / "data"
    shutil.copytree(request.param / "data", copy)
    return request.param, copy


def test_the_data_dir_verifies_clean(fixture_set):
    _, data_dir = fixture_set
    assert verify(data_dir) == []


async def test_the_derived_graph_and_chats_are_unchanged(fixture_set):
    root, data_dir = fixture_set
    graph, chats = await derived(data_dir)
    expected_graph = json.loads((root / "expected_graph.json").read_text("utf-8"))
    expected_chats = json.loads((root / "expected_chats.json").read_text("utf-8"))
    assert expected_graph["nodes"] and expected_chats, "an empty fixture set proves nothing"
    problems = differences(expected_graph, graph, "graph")
    problems += differences(expected_chats, chats, "chats")
    assert not problems, f"{root.name} derives differently now:\n" + "\n".join(problems[:40])


def test_differences_allow_a_newly_derived_field_but_not_a_lost_one():
    before = {"nodes": [{"id": "n1", "state": "verified"}]}
    after = {"nodes": [{"id": "n1", "state": "verified", "memory": {"stability": 2.3}}]}
    assert differences(before, after, "graph") == []
    assert differences(after, before, "graph") == [
        "graph.nodes.n1.memory: expected \"{'stability': 2.3}\", now 'None'"
    ]


def test_differences_names_the_changed_node_field():
    before = {"nodes": [{"id": "n1", "state": "verified"}, {"id": "n2", "state": "shaky"}]}
    after = {"nodes": [{"id": "n2", "state": "shaky"}, {"id": "n1", "state": "introduced"}]}
    assert differences(before, after, "graph") == [
        "graph.nodes.n1.state: expected 'verified', now 'introduced'"
    ]
