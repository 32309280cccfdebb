"""Every way an archive can be wrong is one typed error, and the data dir it was imported
into is byte for byte what it was (a digest of every file before and after)."""

from __future__ import annotations

import io
import struct
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from backend.core.errors import (
    AbsoluteMember,
    ArchiveError,
    ArchiveTooLarge,
    CorruptArchive,
    DuplicateMember,
    DuplicateRecordId,
    InvalidArchiveRecord,
    LinkMember,
    NewerArchive,
    TraversalMember,
    UnexpectedMember,
    UnsupportedArchive,
)
from backend.core.portability.layout import ArchiveLimits
from backend.portability.archive import read_archive
from tests.portability.helpers import (
    add_material,
    digest,
    export_bytes,
    golden_copy,
    import_bytes,
    members,
    renamed,
    rezip,
)

Tamper = Callable[[bytes], bytes]


def _edit(name: str, change: Callable[[bytes], bytes], *, restate: bool = True) -> Tamper:
    def tamper(archive: bytes) -> bytes:
        files = members(archive)
        files[name] = change(files[name])
        return rezip(files, restate=restate)

    return tamper


def _add(name: str, data: bytes = b"", *, restate: bool = True, mode: int = 0) -> Tamper:
    """`archive` with one more member (listed in a re-made manifest when `restate`)."""

    def tamper(archive: bytes) -> bytes:
        files = members(archive)
        if restate:
            files[name] = data
            files = members(rezip(files))
            del files[name]
        out = io.BytesIO(rezip(files, restate=False))
        with zipfile.ZipFile(out, "a") as zf:
            info = zipfile.ZipInfo(name)
            if mode:
                info.external_attr = mode << 16
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # zipfile warns of a duplicate name
                zf.writestr(info, data)
        return out.getvalue()

    return tamper


def _manifest(change: Callable[[dict], None]) -> Tamper:
    def edit(raw: bytes) -> bytes:
        manifest = msgspec.json.decode(raw)
        change(manifest)
        return msgspec.json.encode(manifest)

    return _edit("manifest.json", edit, restate=False)


def _central(name: str, offset: int, value: int, fmt: str = "<I") -> Tamper:
    """Overwrite a field of `name`'s central directory entry (offsets from its signature)."""

    def tamper(archive: bytes) -> bytes:
        data = bytearray(archive)
        at = data.find(b"PK\x01\x02")
        while at >= 0:
            length = struct.unpack_from("<H", data, at + 28)[0]
            if data[at + 46 : at + 46 + length] == name.encode():
                struct.pack_into(fmt, data, at + offset, value)
                return bytes(data)
            at = data.find(b"PK\x01\x02", at + 4)
        raise AssertionError(f"no central entry for {name}")

    return tamper


def _flip_inside(name: str) -> Tamper:
    def tamper(archive: bytes) -> bytes:
        with zipfile.ZipFile(io.BytesIO(archive)) as zf:
            info = zf.getinfo(name)
        data = bytearray(archive)
        start = info.header_offset + 30 + len(name) + len(info.extra)
        data[start + info.compress_size // 2] ^= 0xFF
        return bytes(data)

    return tamper


def _bzip2(archive: bytes) -> bytes:
    files = members(archive)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in files.items():
            method = zipfile.ZIP_BZIP2 if name == "jobs.jsonl" else zipfile.ZIP_DEFLATED
            zf.writestr(name, data, compress_type=method)
    return out.getvalue()


def _bomb(archive: bytes) -> bytes:
    files = members(archive)
    files["traces/chat-b0001.jsonl"] = b"\n" * (24 << 20)  # deflates about 1000 to 1
    return rezip(files)


def _one_byte_changed(raw: bytes) -> bytes:
    middle = len(raw) // 2
    return raw[:middle] + bytes([raw[middle] ^ 1]) + raw[middle + 1 :]


def _nul_name(archive: bytes) -> bytes:
    """A member named `chats.jsonl\\0.txt` (zipfile writes no NUL, so it is patched in)."""
    added = _add("chats.jsonlX.txt", restate=False)(archive)
    return added.replace(b"chats.jsonlX.txt", b"chats.jsonl\x00.txt")


def _first_line_twice(raw: bytes) -> bytes:
    return raw.split(b"\n", 1)[0] + b"\n" + raw


def _chat_field(field: str, value: object) -> Callable[[bytes], bytes]:
    def change(raw: bytes) -> bytes:
        chat = msgspec.json.decode(raw)
        chat[field] = value
        return msgspec.json.encode(chat) + b"\n"

    return change


CASES: list[tuple[str, Tamper, type[ArchiveError], str]] = [
    ("truncated", lambda a: a[: len(a) // 2], CorruptArchive, "not a readable zip"),
    ("not a zip", lambda a: b"PK but not really a zip file", CorruptArchive, "not a readable"),
    ("empty file", lambda a: b"", CorruptArchive, "not a readable zip"),
    ("bytes flipped", _flip_inside("traces/chat-b0001.jsonl"), CorruptArchive, "damaged"),
    ("crc", _central("chats.jsonl", 16, 12345), CorruptArchive, "damaged"),
    ("size said smaller", _central("jobs.jsonl", 24, 10), CorruptArchive, "damaged|bytes"),
    ("size said larger", _central("jobs.jsonl", 24, 99_999), CorruptArchive, "damaged|bytes"),
    (
        "sha256",
        _edit("jobs.jsonl", _one_byte_changed, restate=False),
        CorruptArchive,
        "'jobs.jsonl' does not match its sha256",
    ),
    (
        "record count",
        _manifest(lambda m: m["members"][1].update(records=9)),
        CorruptArchive,
        "'jobs.jsonl' holds 1 records, the manifest says 9",
    ),
    (
        "kind count",
        _manifest(lambda m: m["counts"].update(chats=3)),
        CorruptArchive,
        "holds 1 chats, manifest.json says 3",
    ),
    ("other format", _manifest(lambda m: m.update(format="x")), UnsupportedArchive, "not a Le"),
    ("newer version", _manifest(lambda m: m.update(version=2)), NewerArchive, "newer harness"),
    ("unknown version", _manifest(lambda m: m.update(version=0)), UnsupportedArchive, "0 is not"),
    (
        "manifest garbage",
        _edit("manifest.json", lambda r: b"{", restate=False),
        InvalidArchiveRecord,
        "manifest",
    ),
    (
        "no manifest",
        lambda a: rezip(
            {k: v for k, v in members(a).items() if k != "manifest.json"}, restate=False
        ),
        UnsupportedArchive,
        "no manifest.json",
    ),
    ("zip bomb", _bomb, ArchiveTooLarge, "more than 200 times"),
    ("dot-dot", _add("../evil.jsonl"), TraversalMember, "climbs out"),
    ("inner dot-dot", _add("graph/../chats.jsonl"), TraversalMember, "climbs out"),
    ("backslash dot-dot", _add("traces\\..\\..\\x.jsonl"), TraversalMember, "climbs out"),
    ("absolute", _add("/etc/cron.d/evil"), AbsoluteMember, "absolute"),
    ("drive letter", _add("C:/evil.jsonl"), AbsoluteMember, "absolute"),
    ("nul in name", _nul_name, UnexpectedMember, "control"),
    ("symlink", _add("traces/chat-x.jsonl", b"/etc/passwd", mode=0o120777), LinkMember, "symbolic"),
    ("fifo", _add("traces/chat-x.jsonl", mode=0o010644), LinkMember, "not a regular file"),
    ("duplicate name", _add("chats.jsonl", b"", restate=False), DuplicateMember, "more than once"),
    ("outside the layout", _add("notes.txt"), UnexpectedMember, "not part of"),
    ("directory entry", _add("graph/"), UnexpectedMember, "directory"),
    ("bad trace id", _add("traces/Chat_X.jsonl"), UnexpectedMember, "not part of"),
    ("unlisted", _add("traces/chat-zz.jsonl", b"", restate=False), UnexpectedMember, "not listed"),
    (
        "listed but missing",
        lambda a: rezip({k: v for k, v in members(a).items() if k != "jobs.jsonl"}, restate=False),
        CorruptArchive,
        "'jobs.jsonl' is listed in manifest.json but missing",
    ),
    ("encrypted", _central("chats.jsonl", 8, 1, "<H"), UnsupportedArchive, "encrypted"),
    ("bzip2", _bzip2, UnsupportedArchive, "compression method 12"),
    (
        "a wrong type",
        _edit("chats.jsonl", _chat_field("title", 5)),
        InvalidArchiveRecord,
        r"chats.jsonl line 1: Expected `str`, got `int` - at `\$.title`",
    ),
    (
        "an unsafe id",
        _edit("chats.jsonl", _chat_field("id", "../../etc")),
        InvalidArchiveRecord,
        r"chats.jsonl line 1: .* at `\$.id`",
    ),
    (
        "not json",
        _edit("graph/edges.jsonl", lambda r: r + b"{oops\n"),
        InvalidArchiveRecord,
        "line 2",
    ),
    ("duplicate chat", _edit("chats.jsonl", _first_line_twice), DuplicateRecordId, "chat-b0001"),
    (
        "duplicate node id",
        _edit("graph/propositions.jsonl", _first_line_twice),
        DuplicateRecordId,
        "graph/propositions.jsonl: id 'node-b0001' appears twice",
    ),
    (
        "checkpoint of no chat",
        _edit("graph/sessions.jsonl", lambda r: r.replace(b"chat-b0001", b"chat-nope")),
        InvalidArchiveRecord,
        "checkpoint of chat 'chat-nope', which the archive does not hold",
    ),
    (
        "checkpoint ahead",
        _edit("graph/sessions.jsonl", lambda r: r.replace(b'"folded_at":', b'"folded_at":9')),
        InvalidArchiveRecord,
        "is ahead of it",
    ),
    (
        "material without its original",
        lambda a: rezip({k: v for k, v in members(a).items() if not k.endswith("/original")}),
        InvalidArchiveRecord,
        "material 'mat-b0001' has no materials/mat-b0001/original",
    ),
    (
        "files of no material",
        _add("materials/mat-zz/text.json", b'{"pages": [], "chunks": []}'),
        InvalidArchiveRecord,
        "materials/mat-zz/: the files of a material materials.jsonl does not list",
    ),
    (
        "original not the upload",
        _edit("materials/mat-b0001/original", lambda raw: raw.upper()),
        InvalidArchiveRecord,
        "is not the upload its record describes",
    ),
    (
        "material text garbage",
        _edit("materials/mat-b0001/text.json", lambda raw: b'{"pages": 3}'),
        InvalidArchiveRecord,
        "materials/mat-b0001/text.json: Expected `array`",
    ),
    ("material part unknown", _add("materials/mat-b0001/notes.txt"), UnexpectedMember, "not part"),
    (
        "trace of no chat",
        _add(
            "traces/chat-nope.jsonl", b'{"type":"clock","seq":0,"value":"2026-01-01T00:00:00Z"}\n'
        ),
        InvalidArchiveRecord,
        "a trace of a chat the archive does not hold",
    ),
]


@pytest.fixture(scope="module")
def good_archive(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    source = golden_copy("lesson_python_lists", tmp_path_factory.mktemp("source") / "data")
    add_material(source)
    return renamed(export_bytes(source))


@pytest.mark.parametrize(
    ("tamper", "error", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_bad_archive_is_one_typed_error_and_writes_nothing(
    tmp_path: Path, good_archive: bytes, tamper: Tamper, error: type[ArchiveError], message: str
):
    target = golden_copy("wrong_answer_reteach", tmp_path / "target")
    before = digest(target)
    archive = tamper(good_archive)
    with pytest.raises(error, match=message) as caught:
        import_bytes(archive, target, merge=True)
    assert type(caught.value) is error
    assert digest(target) == before


def test_the_good_archive_itself_merges(tmp_path: Path, good_archive: bytes):
    """The control: untampered, the same archive imports into the same target."""
    target = golden_copy("wrong_answer_reteach", tmp_path / "target")
    before = digest(target)
    report = import_bytes(good_archive, target, merge=True)
    assert report.written["chats"] == 1 and digest(target) != before


def test_the_whole_archive_is_capped_whatever_the_ratio(good_archive: bytes):
    with pytest.raises(ArchiveTooLarge, match="past 20000 uncompressed bytes"):
        read_archive(io.BytesIO(good_archive), ArchiveLimits(max_bytes=20_000))


def test_so_many_members_are_refused_before_any_is_read(good_archive: bytes):
    with pytest.raises(ArchiveTooLarge, match="members"):
        read_archive(io.BytesIO(good_archive), ArchiveLimits(max_members=5))
