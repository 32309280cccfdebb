"""URL hygiene for model-written prose: only URLs a tool actually returned may stay."""

from __future__ import annotations

import re
from collections.abc import Collection

_MD_LINK = re.compile(r"\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_BARE = re.compile(
    r"\b(?:https?|ftp)://[^\s<>()\[\]\"']+"
    r"|\bwww\.[^\s<>()\[\]\"']+"
    r"|\b(?:[a-z0-9-]+\.)+[a-z]{2,}/[^\s<>()\[\]\"']*",
    re.I,
)
_TRAILING = ".,;:!?"
REMOVED = "[link removed]"


def strip_urls(text: str, allowed: Collection[str] = ()) -> str:
    """`text` with every URL not in `allowed` removed (markdown links keep their text)."""

    def link(m: re.Match[str]) -> str:
        return m.group(0) if m.group(2) in allowed else m.group(1)

    def bare(m: re.Match[str]) -> str:
        url = m.group(0).rstrip(_TRAILING)
        tail = m.group(0)[len(url) :]
        return m.group(0) if url in allowed else REMOVED + tail

    return _BARE.sub(bare, _MD_LINK.sub(link, text))
