"""A process killed at any file operation of adding or removing a material leaves, once the
store reopens, the whole material or none of it: files, listing and index agree."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from backend.store.file_material_store import INDEX_FILE, FileMaterialStore
from tests.reliability.crashing_fileops import CRASH_EXIT_CODE

SETUP = """
import asyncio, os, sys
from datetime import UTC, datetime
from backend.ingest import read_document
from backend.store.file_material_store import INDEX_FILE, FileMaterialStore
from backend.store.fileops import OsFileOps
from tests.reliability.crashing_fileops import CrashingFileOps
from shared_contracts.materials import Material

root = sys.argv[1]
spec = sys.argv[2]
fs = CrashingFileOps.from_spec(spec) if spec else OsFileOps()
DATA = ("# Fractions\\n\\n" + "A fraction names part of a whole. " * 400).encode()

def material(mid):
    doc = read_document(DATA, "f.md", max_bytes=10**7)
    m = Material(id=mid, title=doc.title, kind=doc.kind, pages=len(doc.text.pages),
                 chunks=len(doc.text.chunks), created_at=datetime(2026, 1, 1, tzinfo=UTC))
    return m, doc.text, DATA
"""


def _run(root, spec: str, body: str) -> subprocess.CompletedProcess[str]:
    script = SETUP + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script, str(root), spec], capture_output=True, text=True, timeout=60
    )


async def _state(root) -> tuple[list[str], set[str]]:
    """(the materials listed, the materials the index holds rows of) after a reopen; every
    listed one decodes whole and is found by a search."""
    store = FileMaterialStore(root)
    try:
        listed = [m.id for m in await store.list_all()]
        for material_id in listed:
            text = await store.text(material_id)
            assert len(text.chunks) == (await store.get(material_id)).chunks
            assert await store.search("fraction whole", limit=1, material_id=material_id)
        for transient in (".staging", ".removing"):
            folder = root / "materials" / transient
            assert not folder.exists() or os.listdir(folder) == []
    finally:
        store.close()
    if not (root / "materials" / INDEX_FILE).exists():
        return listed, set()
    index = sqlite3.connect(root / "materials" / INDEX_FILE)
    try:
        rows = index.execute("SELECT DISTINCT material_id FROM chunk").fetchall()
    finally:
        index.close()
    return listed, {row[0] for row in rows}


ADD_POINTS = [
    *(f"write@materials:{n}" for n in (1, 2, 3)),
    *(f"half_write@materials:{n}" for n in (1, 2, 3)),
    *(f"fsync@materials:{n}" for n in (1, 2, 3)),
    "fsync_dir@.staging:1",
    "replace@materials:1",
    "fsync_dir@materials:2",
]


@pytest.mark.parametrize("spec", ADD_POINTS)
def test_a_crash_while_adding_leaves_all_or_nothing(tmp_path, spec):
    done = _run(tmp_path, spec, "asyncio.run(FileMaterialStore(root, fs).add(*material('mat-1')))")
    assert done.returncode == CRASH_EXIT_CODE, done.stderr
    listed, searched = asyncio.run(_state(tmp_path))
    assert listed in ([], ["mat-1"])
    assert searched == set(listed)  # indexed exactly when listed


@pytest.mark.parametrize("spec", ["replace@materials:1", "fsync_dir@materials:1"])
def test_a_crash_while_removing_leaves_all_or_nothing(tmp_path, spec):
    assert _run(tmp_path, "", "asyncio.run(FileMaterialStore(root, fs).add(*material('mat-1')))")
    done = _run(tmp_path, spec, "asyncio.run(FileMaterialStore(root, fs).remove('mat-1'))")
    assert done.returncode == CRASH_EXIT_CODE, done.stderr
    listed, searched = asyncio.run(_state(tmp_path))
    assert listed == []  # the rename out was the commit point
    assert searched == set()


def test_killed_at_random_moments_while_adding(tmp_path):
    """SIGKILL at a spread of moments, the index transaction included."""
    body = """
    async def main():
        store = FileMaterialStore(root, fs)
        print("ready", flush=True)
        for i in range(10_000):
            await store.add(*material(f"mat-{i}"))
    asyncio.run(main())
    """
    for delay in (0.05, 0.11, 0.17, 0.23, 0.31):
        proc = subprocess.Popen(
            [sys.executable, "-c", SETUP + textwrap.dedent(body), str(tmp_path), ""],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        listed, searched = asyncio.run(_state(tmp_path))
        assert searched == set(listed)
        for name in listed:  # the next run starts from a clean slate
            os.rename(tmp_path / "materials" / name, tmp_path / "materials" / ".removing" / name)
