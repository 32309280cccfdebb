"""A chat whose recorded model reply carries script, an onerror image and a javascript: link."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import msgspec

from shared_contracts.chat import ChatRecord, Message, TextPart

HOSTILE_CHAT_ID = "hostile-reply"
HOSTILE_TEXT = (
    "Fractions are fun <script>window.__pwned = 'script'; alert('script')</script> really.\n\n"
    "<img src=\"x\" onerror=\"window.__pwned = 'img'; alert('img')\">\n\n"
    "[click for more](javascript:window.__pwned='link';alert('link'))\n\n"
    "<a href=\"javascript:window.__pwned='a'\">raw link</a>\n\n"
    "Math still works: $\\frac{1}{2}$ MARKER-END"
)


def write_hostile_chat(data_dir: Path) -> None:
    """Writes the record where the API's chat store reads it (`chats/<id>.json`)."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    record = ChatRecord(
        id=HOSTILE_CHAT_ID,
        title="A hostile reply",
        created_at=at,
        updated_at=at,
        model="offline",
        turns=1,
        messages=[
            Message(id="m1", role="user", turn=1, created_at=at, parts=[TextPart(text="hi")]),
            Message(
                id="m2",
                role="assistant",
                turn=1,
                created_at=at,
                parts=[TextPart(text=HOSTILE_TEXT)],
            ),
        ],
    )
    chats = data_dir / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    (chats / f"{HOSTILE_CHAT_ID}.json").write_bytes(msgspec.json.encode(record))
