"""A moment a client names (`as_of`): ISO 8601 text, read once here for every transport."""

from __future__ import annotations

from datetime import UTC, datetime

from backend.core.errors import InvalidMoment

EXAMPLE = "2026-03-01T12:00:00Z"


def parse_moment(text: str) -> datetime:
    """The moment `text` names: an ISO 8601 date-time (`Z` or an offset; one without a
    zone is UTC) or a date (its midnight, UTC). `InvalidMoment` names what was wrong."""
    raw = text.strip()
    try:
        moment = datetime.fromisoformat(raw) if raw else None
    except ValueError:
        moment = None
    if moment is None:
        shown = raw[:40] + ("..." if len(raw) > 40 else "")
        raise InvalidMoment(
            f"as_of must be an ISO 8601 date or date-time such as {EXAMPLE}, got {shown!r}"
        )
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
