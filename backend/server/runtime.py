"""The production Clock and IdGen: the only places that read the time or make ids."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class RandomIds:
    """`<prefix>-<12 hex>`: valid ids (lower-case, ≤64) that are unique in practice."""

    def new(self, prefix: str) -> str:
        return f"{prefix}-{secrets.token_hex(6)}"
