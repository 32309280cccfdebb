"""The archive's member names, what a name may be, and the caps a reader holds to.

A reader judges every name before it reads a byte: a `..` component, an absolute path, a
link or a name outside the layout is refused, never followed, so no name in an archive can
reach outside what the importer writes through the ports (it writes no member as a file).
"""

from __future__ import annotations

import re
import stat
from dataclasses import dataclass
from typing import Literal

from backend.core.errors import (
    AbsoluteMember,
    LinkMember,
    TraversalMember,
    UnexpectedMember,
)
from backend.core.ids import is_valid_id

MANIFEST = "manifest.json"
CHATS = "chats.jsonl"
JOBS = "jobs.jsonl"
MATERIALS = "materials.jsonl"
LEDGERS = ("propositions", "edges", "events", "mappings", "audit", "sessions")
"""The graph ledgers, in the order they are appended (checkpoints last, as the store does)."""

MemberKind = Literal[
    "chats", "jobs", "ledger", "trace", "materials", "material_text", "material_original"
]
MATERIAL_PARTS: dict[str, MemberKind] = {
    "text.json": "material_text",
    "original": "material_original",
}

_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def ledger_member(ledger: str) -> str:
    return f"graph/{ledger}.jsonl"


def trace_member(chat_id: str) -> str:
    return f"traces/{chat_id}.jsonl"


def material_text_member(material_id: str) -> str:
    return f"materials/{material_id}/text.json"


def material_original_member(material_id: str) -> str:
    return f"materials/{material_id}/original"


@dataclass(frozen=True, slots=True)
class MemberRef:
    """What a member holds: `key` is the ledger's name, the trace's chat id or the
    material's id."""

    kind: MemberKind
    key: str = ""


def check_member_name(name: str) -> None:
    """Refuse a name no reader may follow: `..`, absolute, a drive letter, control bytes."""
    shown = repr(name)[:120]
    parts = re.split(r"[\\/]", name)
    if ".." in parts:
        raise TraversalMember(f"member {shown} climbs out of the archive (a `..` component)")
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        raise AbsoluteMember(f"member {shown} is an absolute path")
    if _CONTROL.search(name) or not name:
        raise UnexpectedMember(f"member {shown} has control characters or is empty")


def check_member_mode(name: str, unix_mode: int) -> None:
    """Refuse a member stored as a symlink, hard link target or any non-regular file (the
    Unix mode a zip keeps in its external attributes; 0 when the writer kept none)."""
    kind = stat.S_IFMT(unix_mode)
    if kind == stat.S_IFDIR:
        raise UnexpectedMember(f"member {name!r} is a directory entry")
    if kind == stat.S_IFLNK:
        raise LinkMember(f"member {name!r} is a symbolic link")
    if kind not in (0, stat.S_IFREG):
        raise LinkMember(f"member {name!r} is not a regular file (mode {oct(unix_mode)})")


def locate(name: str) -> MemberRef:
    """The member `name` holds, or `UnexpectedMember` for a name outside the layout."""
    if name == CHATS:
        return MemberRef("chats")
    if name == JOBS:
        return MemberRef("jobs")
    if name == MATERIALS:
        return MemberRef("materials")
    folder, _, file = name.partition("/")
    stem = file.removesuffix(".jsonl")
    if folder == "graph" and file.endswith(".jsonl") and stem in LEDGERS:
        return MemberRef("ledger", stem)
    if folder == "traces" and file.endswith(".jsonl") and is_valid_id(stem):
        return MemberRef("trace", stem)
    material_id, _, part = file.partition("/")
    if folder == "materials" and part in MATERIAL_PARTS and is_valid_id(material_id):
        return MemberRef(MATERIAL_PARTS[part], material_id)
    raise UnexpectedMember(f"member {name!r} is not part of an archive's layout")


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """What a reader will decompress, whatever the zip declares (it counts real bytes)."""

    max_bytes: int = 1 << 30
    """Uncompressed bytes of all members together (1 GiB: everything is checked in memory
    before anything is written)."""
    max_ratio: int = 200
    """Uncompressed over compressed bytes of one member past `ratio_floor` (JSON Lines of
    a real data dir compress about 5 to 30 times; a zip bomb a thousand)."""
    ratio_floor: int = 1 << 20
    """A member may reach this size whatever its ratio (a small, repetitive file is fine)."""
    max_members: int = 100_000
    max_manifest_bytes: int = 16 << 20

    def member_cap(self, compressed: int, remaining: int) -> int:
        """The most bytes one member may decompress to, given what the archive has left."""
        return min(remaining, max(self.ratio_floor, compressed * self.max_ratio))
