"""The Markdown vault: a note per node and per session and an index, every [[link]]
resolving to exactly one note, file names safe whatever the statements say."""

from __future__ import annotations

import io
import re
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from backend.core.portability.vault import build_vault, safe_name, text
from backend.portability.vault_files import VaultRefused, vault_files, vault_zip, write_vault
from backend.server.stores import build_stores
from shared_contracts.chat import ChatSummary
from shared_contracts.graph import GraphNode, GraphSnapshot
from tests.portability.helpers import golden_copy, snapshot_of

LINK = re.compile(r"\[\[([^\]|]+)\]\]")


def _vault(golden: str, tmp_path: Path) -> dict[str, str]:
    stores = build_stores(golden_copy(golden, tmp_path / "data"))
    snapshot, _ = snapshot_of(stores)
    return anyio.run(vault_files, stores.chats, snapshot)


def _stems(files: dict[str, str]) -> dict[str, str]:
    return {Path(name).stem.casefold(): name for name in files}


def test_a_note_per_node_and_session_and_every_link_finds_one_note(tmp_path: Path):
    files = _vault("lesson_end_session", tmp_path)
    assert sorted(name.split("/")[0] for name in files) == ["Index.md"] + ["Nodes"] * 5 + [
        "Sessions"
    ]
    assert "Sessions/2026-01-01 teach me fractions.md" in files
    stems = _stems(files)
    assert len(stems) == len(files)  # unique without regard to case
    for name, body in files.items():
        for target in LINK.findall(body):
            assert target.casefold() in stems, f"{name} links to a missing note {target!r}"

    adding = files["Nodes/Adding fractions Common denominators first, then add the numerators.md"]
    assert adding.startswith('---\nid: "node-0003"\nkind: "proposition"\nstate: ')
    assert "# Adding fractions: Common denominators first, then add the numerators" in adding
    assert "## Requires\n\n- [[Equivalent fractions Different-looking fractions with the" in adding
    assert "- [[Adding whole numbers]]" in adding
    assert "## Evidence\n\n> Q: " in adding and "in [[2026-01-01 teach me fractions]]" in adding
    assert "## Probes\n\n- 2026-01-01 ✓ " in adding or "## Probes\n\n- 2026-01-01 ✗ " in adding
    equivalent = next(body for name, body in files.items() if "Equivalent" in name)
    assert "## Required by\n\n- [[Adding fractions" in equivalent
    session = files["Sessions/2026-01-01 teach me fractions.md"]
    assert session.count("- [[") == 5
    index = files["Index.md"]
    assert "[[2026-01-01 teach me fractions]]" in index and index.count("- [[") == 6


def test_file_names_are_safe_and_unique_whatever_the_statements():
    hostile = [
        "../../etc/passwd",
        "..",
        "CON",
        "nul.txt",
        'a/b\\c:d*e?f"g<h>i|j',
        "[[Index]] #tag ^block",
        ".hidden",
        "x" * 300,
        "line\nbreak\x00nul",
        "Halves",
        "HALVES",
        "",
    ]
    nodes = [
        GraphNode(id=f"node-{i}", statement=s, kind="proposition", state="introduced")
        for i, s in enumerate(hostile)
    ]
    files = build_vault(GraphSnapshot(nodes=nodes), [])
    names = [n for n in files if n.startswith("Nodes/")]
    assert len(names) == len(hostile)
    for name in names:
        stem = name.removeprefix("Nodes/").removesuffix(".md")
        assert stem and len(stem) <= 84
        assert not re.search(r'[\\/:*?"<>|#^\[\]\x00-\x1f]', stem)
        assert not stem.startswith(".") and not stem.endswith((".", " "))
    assert "Nodes/etc passwd.md" in names
    assert "Nodes/CON (note).md" in names and "Nodes/nul.txt (note).md" in names
    assert "Nodes/Halves.md" in names and "Nodes/HALVES (2).md" in names
    assert "Nodes/node-11.md" in names  # nothing usable: the id
    assert safe_name("x" * 300, "id") == "x" * 80


def test_text_from_the_graph_renders_as_text():
    assert text("<img src=http://evil/x>") == "&lt;img src=http://evil/x&gt;"
    assert text("[[Index]] and `code` *em*") == r"\[\[Index\]\] and \`code\` \*em\*"
    assert text("# not a heading\n- not a list") == "\\# not a heading\n\\- not a list"
    assert text("1/2 < 3/4 & $\\frac{1}{2}$") == "1/2 &lt; 3/4 &amp; $\\\\frac{1}{2}$"


def test_a_vault_is_written_into_a_new_or_empty_directory_only(tmp_path: Path):
    files = _vault("wrong_answer_reteach", tmp_path)
    target = tmp_path / "vault"
    write_vault(files, target)
    written = {str(p.relative_to(target)) for p in target.rglob("*.md")}
    assert written == set(files)
    assert (target / "Index.md").read_text("utf-8") == files["Index.md"]
    with pytest.raises(VaultRefused, match="not an empty directory"):
        write_vault(files, target)
    (tmp_path / "empty").mkdir()
    write_vault(files, tmp_path / "empty")


def test_the_vault_zip_unpacks_into_one_folder(tmp_path: Path):
    files = _vault("lesson_python_lists", tmp_path)
    with zipfile.ZipFile(io.BytesIO(vault_zip(files))) as zf:
        assert {n.removeprefix("Learning Harness/") for n in zf.namelist()} == set(files)
        assert zf.read("Learning Harness/Index.md").decode() == files["Index.md"]


def test_a_session_with_nothing_in_the_graph_still_has_its_note():
    chat = ChatSummary(
        id="chat-x",
        title="just saying hello",
        created_at=datetime(2026, 2, 3, tzinfo=UTC),
        updated_at=datetime(2026, 2, 3, tzinfo=UTC),
        model="offline",
        turns=1,
        messages=2,
    )
    files = build_vault(GraphSnapshot(), [chat])
    assert (
        "Nothing from this session is in the graph yet."
        in files["Sessions/2026-02-03 just saying hello.md"]
    )
