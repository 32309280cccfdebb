"""A learner's export archive: the zip `harness export --out` writes and `harness import`
reads. Its `manifest.json` describes every other member; the members hold the records as
JSON Lines, each line one Struct of this package (`ChatRecord`, `Job`, a ledger line, a
trace event):

    manifest.json                 ArchiveManifest
    chats.jsonl                   ChatRecord per line
    jobs.jsonl                    Job per line
    graph/<ledger>.jsonl          the six ledgers, lines in ledger order
    traces/<chat_id>.jsonl        a chat's trace events (left out by `--no-traces`)
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final, Literal

import msgspec

from shared_contracts.base import Record

ARCHIVE_FORMAT: Final = "learning-harness-archive"
ARCHIVE_VERSION = 1
"""The layout and member encodings above. A reader refuses a higher version (written by a
newer harness) and any version it does not know."""

Sha256 = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")]
Count = Annotated[int, msgspec.Meta(ge=0)]


class ManifestHead(Record, kw_only=True, frozen=True):
    """The two fields every version keeps: read first, so a newer archive is refused by its
    version, not by a field this reader does not know."""

    format: str = ""
    version: int = 0


class ArchiveMember(Record, kw_only=True, frozen=True):
    name: str
    """The member's path in the zip (see the layout above)."""
    sha256: Sha256
    """Of the member's uncompressed bytes."""
    size: Count
    """Uncompressed bytes."""
    records: Count
    """Lines (records) in the member."""


class ArchiveManifest(Record, kw_only=True, frozen=True):
    format: Literal["learning-harness-archive"]
    version: int
    created_at: datetime
    traces: bool
    """False when the archive was made without traces (`--no-traces`)."""
    members: list[ArchiveMember] = msgspec.field(default_factory=list)
    """Every member but the manifest itself, in the order written."""
    counts: dict[str, Count] = msgspec.field(default_factory=dict)
    """Records per kind: `chats`, `jobs`, each ledger by name, `traces` (chats with a trace)
    and `trace_events`."""
