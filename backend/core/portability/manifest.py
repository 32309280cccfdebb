"""The manifest: what an archive says it holds, and the checks of what it really holds.

Read in two steps: the head (`format`, `version`) first, so an archive from a newer harness
is refused for its version and not for a field this one does not know; then the whole
manifest. Every other member must be listed once, with its exact size, sha256 and count.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from datetime import datetime

import msgspec

from backend.core.errors import (
    CorruptArchive,
    InvalidArchiveRecord,
    NewerArchive,
    UnexpectedMember,
    UnsupportedArchive,
)
from backend.core.portability.records import EncodedMember
from shared_contracts.archive import (
    ARCHIVE_FORMAT,
    ARCHIVE_VERSION,
    ArchiveManifest,
    ArchiveMember,
    ManifestHead,
)

_HEAD = msgspec.json.Decoder(ManifestHead)
_MANIFEST = msgspec.json.Decoder(ArchiveManifest)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_manifest(
    members: Iterable[EncodedMember],
    counts: Mapping[str, int],
    *,
    created_at: datetime,
    traces: bool,
) -> ArchiveManifest:
    return ArchiveManifest(
        format=ARCHIVE_FORMAT,
        version=ARCHIVE_VERSION,
        created_at=created_at,
        traces=traces,
        members=[
            ArchiveMember(name=m.name, sha256=sha256(m.data), size=len(m.data), records=m.records)
            for m in members
        ],
        counts=dict(counts),
    )


def encode_manifest(manifest: ArchiveManifest) -> bytes:
    return msgspec.json.format(msgspec.json.encode(manifest), indent=2) + b"\n"


def decode_manifest(raw: bytes) -> ArchiveManifest:
    """The manifest, once its format and version are ones this harness reads."""
    try:
        head = _HEAD.decode(raw)
    except msgspec.DecodeError as exc:
        raise InvalidArchiveRecord(f"manifest.json does not decode: {exc}") from None
    if head.format != ARCHIVE_FORMAT:
        raise UnsupportedArchive(
            f"not a Learning Harness archive (manifest format {head.format[:80]!r})"
        )
    if head.version > ARCHIVE_VERSION:
        raise NewerArchive(
            f"archive version {head.version} was written by a newer harness (this one reads"
            f" version {ARCHIVE_VERSION}): upgrade the harness to import it"
        )
    if head.version != ARCHIVE_VERSION:
        raise UnsupportedArchive(
            f"archive version {head.version} is not one this harness reads"
            f" (it reads version {ARCHIVE_VERSION})"
        )
    try:
        return _MANIFEST.decode(raw)
    except msgspec.DecodeError as exc:
        raise InvalidArchiveRecord(f"manifest.json does not decode: {exc}") from None


def listed(manifest: ArchiveManifest, present: Iterable[str]) -> dict[str, ArchiveMember]:
    """The manifest's entries by name, once every present member is listed exactly once
    and every listed member is present."""
    entries: dict[str, ArchiveMember] = {}
    for entry in manifest.members:
        if entry.name in entries:
            raise InvalidArchiveRecord(f"manifest.json lists {entry.name!r} twice")
        entries[entry.name] = entry
    names = set(present)
    for name in sorted(names - entries.keys()):
        raise UnexpectedMember(f"member {name!r} is not listed in manifest.json")
    for name in sorted(entries.keys() - names):
        raise CorruptArchive(f"member {name!r} is listed in manifest.json but missing")
    return entries


def check_member(entry: ArchiveMember, raw: bytes) -> None:
    """`raw` is exactly what the manifest says of the member."""
    if len(raw) != entry.size:
        raise CorruptArchive(
            f"member {entry.name!r} holds {len(raw)} bytes, the manifest says {entry.size}"
        )
    if sha256(raw) != entry.sha256:
        raise CorruptArchive(f"member {entry.name!r} does not match its sha256 in manifest.json")


def check_count(entry: ArchiveMember, records: int) -> None:
    """The member decoded to as many records as the manifest says."""
    if records != entry.records:
        raise CorruptArchive(
            f"member {entry.name!r} holds {records} records, the manifest says {entry.records}"
        )


def check_totals(manifest: ArchiveManifest, counts: Mapping[str, int]) -> None:
    """The manifest's per-kind counts are what the members hold."""
    for kind, count in counts.items():
        stated = manifest.counts.get(kind)
        if stated != count:
            raise CorruptArchive(f"the archive holds {count} {kind}, manifest.json says {stated}")
