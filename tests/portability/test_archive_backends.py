"""Export and import work through the ports, so on every backend: an archive imported into
a learner on PostgreSQL exports the very same bytes, merges idempotently, and a bad
archive leaves the learner's data as it was."""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import pytest

from backend.core.errors import ImportConflict, InvalidArchiveRecord
from backend.portability.archive import (
    export_archive,
    import_archive,
    load_learner,
    read_archive,
)
from backend.server.stores import FileStoreFactory, open_store_factory
from tests.fakes import FixedClock
from tests.portability.helpers import (
    add_material,
    export_bytes,
    golden_copy,
    members,
    renamed,
    rezip,
)

_learners = itertools.count()


@pytest.fixture(params=["files", "postgresql"])
async def factory(request, tmp_path: Path):
    if request.param == "files":
        yield FileStoreFactory(tmp_path / "data")
        return
    async with open_store_factory(tmp_path / "data", request.getfixturevalue("pg_url")) as f:
        yield f


@pytest.fixture
def learner(factory):
    return factory.for_learner(f"learner-x{next(_learners)}-{id(_learners) % 9973}")


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    source = golden_copy("job_and_extraction", tmp_path_factory.mktemp("source") / "data")
    add_material(source)
    return export_bytes(source)


async def _export(stores) -> bytes:
    out = io.BytesIO()
    await export_archive(stores, out, clock=FixedClock())
    return out.getvalue()


async def test_an_imported_learner_exports_the_same_bytes(learner, archive: bytes):
    report = await import_archive(learner, read_archive(io.BytesIO(archive)))
    assert report.written == report.read and not report.merged
    assert report.written["materials"] == 1
    assert await _export(learner) == archive


async def test_a_second_import_writes_nothing_on_any_backend(learner, archive: bytes):
    data = read_archive(io.BytesIO(archive))
    await import_archive(learner, data)
    before = await load_learner(learner)
    again = await import_archive(learner, data, merge=True)
    assert again.merged and sum(again.written.values()) == 0
    assert await load_learner(learner) == before


async def test_a_refused_import_leaves_the_learner_as_it_was(learner, archive: bytes):
    await import_archive(learner, read_archive(io.BytesIO(archive)))
    before = await load_learner(learner)
    files = members(renamed(archive))
    files["jobs.jsonl"] += files["jobs.jsonl"].split(b"\n", 1)[0] + b"\n"
    with pytest.raises(InvalidArchiveRecord):
        await import_archive(learner, read_archive(io.BytesIO(rezip(files))), merge=True)
    other = members(archive)
    other["chats.jsonl"] = other["chats.jsonl"].replace(b'"turns":', b'"turns":1', 1)
    with pytest.raises(ImportConflict, match="chat 'chat-0001'"):
        await import_archive(learner, read_archive(io.BytesIO(rezip(other))), merge=True)
    assert await load_learner(learner) == before
