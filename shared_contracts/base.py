"""Base classes and constrained scalars shared by every contract.

Records read back from disk tolerate unknown fields (an older reader must skip a newer
writer's additions); inbound frames and tool arguments forbid them.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
# msgspec matches with re.search, where `$` also matches before a final newline: the
# look-ahead makes "abc\n" fail in Python as it does in JSON Schema (ECMA) validators.
STRICT_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}(?!\n)$"

Id = Annotated[
    str, msgspec.Meta(pattern=STRICT_ID_PATTERN, description="a safe id: [a-z0-9_-], ≤64")
]
"""Every id that can become part of a file name."""

ToolCallId = Annotated[
    str,
    msgspec.Meta(pattern=r"^[A-Za-z0-9_.:-]{1,128}(?!\n)$", description="a model's tool-call id"),
]
"""Tool-call ids come from providers (e.g. `call_AbC`); they never become file names."""

Confidence = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]


class Record(msgspec.Struct, kw_only=True, frozen=True):
    """A record written to or read from disk: unknown fields are skipped."""


class Body(msgspec.Struct, kw_only=True, frozen=True):
    """An HTTP body or other outbound value."""


class Inbound(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Anything decoded from an untrusted peer (client frames, model tool arguments)."""
