"""Architecture fitness, checked on the source: modules and functions stay small, the server
stays transport and composition (a line budget: application logic lives in the packages
below it), and no project module imports itself back through others (TYPE_CHECKING imports
count: a type import that closes a circle is resolved with a Protocol in the lower module)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("backend", "shared_contracts", "ui")
"""Everything but tests and bench: sized and checked for import circles alike."""
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
SERVER = "backend/server"
MAX_SERVER_LINES = 2_500
MAX_SERVER_MEDIAN = 100
MAX_MEDIAN = 100


def _modules(packages: tuple[str, ...]) -> Iterator[tuple[str, Path]]:
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            yield name, path


def test_no_module_is_over_400_lines() -> None:
    long = {
        name: n
        for name, path in _modules(PACKAGES)
        if (n := len(path.read_text("utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"split by concept: {long}"


def _module_lines(packages: tuple[str, ...]) -> dict[str, int]:
    return {name: len(path.read_text("utf-8").splitlines()) for name, path in _modules(packages)}


def _median(values: list[int]) -> float:
    lines = sorted(values)
    middle = len(lines) // 2
    return lines[middle] if len(lines) % 2 else (lines[middle - 1] + lines[middle]) / 2


def test_the_median_module_is_at_most_100_lines() -> None:
    """Over everything but tests and bench: a concept per module, most of them short."""
    lines = _module_lines(PACKAGES)
    assert _median(list(lines.values())) <= MAX_MEDIAN, sorted(lines.items(), key=lambda kv: kv[1])


def test_the_server_is_transport_and_composition_in_2500_lines() -> None:
    """Routes, the WebSocket, config and composition roots fit in the budget; a service,
    a turn step or a format that grows there belongs in a package below the server."""
    lines = _module_lines((SERVER,))
    assert sum(lines.values()) <= MAX_SERVER_LINES, sorted(lines.items(), key=lambda kv: -kv[1])


def test_the_servers_median_module_is_at_most_100_lines() -> None:
    lines = _module_lines((SERVER,))
    assert _median(list(lines.values())) <= MAX_SERVER_MEDIAN, sorted(lines.values())


def test_no_function_is_over_60_lines() -> None:
    long = {}
    for name, path in _modules(PACKAGES):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                where = f"{name}.{node.name}"
                if length > MAX_FUNCTION_LINES:
                    long[where] = length
    assert not long, f"split: {long}"


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules `name` imports anywhere in its source (functions and
    TYPE_CHECKING blocks included), each as the module it names."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:  # `from pkg import module` imports the module
                module = f"{base}.{alias.name}"
                found.add(module if module in known else base)
    return {m for m in found if m in known and m != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_between_project_modules() -> None:
    paths = dict(_modules(PACKAGES))
    known = set(paths)
    graph = {name: _imports(name, path, known) for name, path in paths.items()}
    assert _cycles(graph) == []


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
