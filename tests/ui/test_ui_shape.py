"""The UI stays in pieces a reader can hold: no module over 400 lines, no function over
60, and no import circles (that the view models, `ui.model`, import no Reflex is an
import-linter contract)."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

UI = Path(__file__).resolve().parents[2] / "ui"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _modules() -> list[Path]:
    return sorted(UI.rglob("*.py"))


def test_no_module_is_over_400_lines():
    long = {
        p.relative_to(UI).as_posix(): n
        for p in _modules()
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_function_is_over_60_lines():
    long: dict[str, int] = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(UI).as_posix()}:{node.name}"] = lines
    assert long == {}


def test_no_ui_module_imports_itself_back():
    """No circle: a module never reaches, through its imports, a module that imports it."""
    graph = grimp.build_graph("ui", include_external_packages=False)
    circles = sorted(
        (module, imported)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if graph.chain_exists(importer=imported, imported=module)
    )
    assert circles == []
