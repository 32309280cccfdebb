"""`harness materials add · list · search · remove`: the same service as the API, its
refusals one line on stderr (exit 1), nothing stored for a refused file."""

from __future__ import annotations

from pathlib import Path

from backend.cli import main
from tests.materials.pdf_writer import encrypted, text_pdf
from tests.materials.samples import PLANTS_MD


def test_add_list_search_remove(env: Path, capsys) -> None:
    (env / "plants.md").write_bytes(PLANTS_MD)
    assert main(["materials", "add", "plants.md"]) == 0
    added = capsys.readouterr().out.strip()
    assert added.startswith("added mat-") and "“How plants feed themselves” (markdown" in added
    material_id = added.split()[1]

    assert main(["materials", "list"]) == 0
    assert capsys.readouterr().out.startswith(f"{material_id}  “How plants feed themselves”")

    assert main(["materials", "search", "xylem tubes", "--limit", "1"]) == 0
    first, snippet = capsys.readouterr().out.splitlines()
    assert first.startswith(f"{material_id}  p.1  ") and "xylem" in snippet

    assert main(["materials", "remove", material_id]) == 0
    assert main(["materials", "list"]) == 0
    assert "no materials yet" in capsys.readouterr().out
    assert main(["materials", "remove", material_id]) == 2
    assert "not found" in capsys.readouterr().err


def test_a_refused_file_says_why_and_stores_nothing(env: Path, capsys) -> None:
    (env / "locked.pdf").write_bytes(encrypted(text_pdf([["A page of secret text."]])))
    assert main(["materials", "add", "locked.pdf"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("harness materials add: ") and "password" in err.lower()
    assert err.endswith("Nothing was stored.")
    assert main(["materials", "list"]) == 0
    assert "no materials yet" in capsys.readouterr().out
    assert main(["materials", "add", "missing.md"]) == 2
    assert "cannot read missing.md" in capsys.readouterr().err
