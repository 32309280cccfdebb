"""≥ 500 hostile ids and names: traversal, encodings, absolute paths, NUL, backslashes,
look-alike unicode dots and slashes, huge and empty strings — and the one rule that says
which file paths a store may touch."""

from __future__ import annotations

import re
from pathlib import Path

from backend.core.ids import is_valid_id

CORES = [
    "../",
    "..",
    ".",
    "../../etc/passwd",
    "..\\..\\windows\\win.ini",
    "%2e%2e/",
    "%2e%2e%2f",
    "..%2f",
    "%252e%252e%252f",
    "..%c0%af",
    "/etc/passwd",
    "/tmp/x",
    "//server/share",
    "C:\\Windows\\system32",
    "\\\\server\\share",
    "a\\b",
    "a/b",
    "a\x00b",
    "\x00",
    "x.json\x00.txt",
    "．．／",  # fullwidth dots and solidus
    "‥／",  # two-dot leader
    "…",
    "。。/",  # ideographic full stop
    "⁄",  # fraction slash
    "∕",  # division slash
    "﹒﹒/",  # small full stop
    "ﾟ.",
    "\u2024\u2024/",  # one-dot leader
    ".hidden",
    "~",
    "~root",
    "$HOME",
    "${jndi:ldap://x}",
    "`id`",
    "a\nb",
    "a\rb",
    "a\tb",
    " ",
    "CHAT",
    "Chat-1",
    "çhat",
    "chat-1.json",
    "chat-1/../chat-2",
    "-lead",
    "_lead",
    "\u202e",  # right-to-left override
    "\ufeff",
    "😀",
]
PREFIXES = ["", "chat-", "x/", "ok-", "a."]
SUFFIXES = ["", "x", "/", ".json", "%00"]


def hostile_ids() -> list[str]:
    """At least 500 unique strings, every one of which the id rule must refuse."""
    out: dict[str, None] = {"": None, "x" * 10_240: None, "a" * 65: None, "../" * 3000: None}
    for core in CORES:
        for prefix in PREFIXES:
            for suffix in SUFFIXES:
                out[prefix + core + suffix] = None
    # A prefix can turn a core into a valid id ("chat-" + "-lead"): those are not hostile.
    values = [v for v in out if not is_valid_id(v)]
    assert len(values) >= 500
    return values


def safe_layout(data_dir: Path) -> re.Pattern[str]:
    """Paths a store may touch: the data dir, its four folders, and files named by valid ids
    (or ledger names), plus their `.tmp` siblings; the materials' directories (one per
    valid id, staged or being removed) and the files in them."""
    root = re.escape(str(data_dir))
    ident = r"[a-z0-9][a-z0-9_-]{0,63}"
    name = rf"{ident}\.(?:json|jsonl)(?:\.\d+-\d+\.tmp)?"
    files = r"material\.json|text\.json|original\.(?:pdf|md|txt)"
    material = rf"(?:\.staging/|\.removing/)?{ident}(?:/(?:{files}))?"
    materials = rf"materials(?:/\.staging|/\.removing|/{material})?"
    return re.compile(rf"^{root}(?:/(?:(?:chats|jobs|traces|graph)(?:/{name})?|{materials}))?$")


def unsafe_calls(calls: list[tuple[str, object]], data_dir: Path) -> list[tuple[str, object]]:
    """Recorded FileOps calls whose path breaks the safe layout."""
    layout = safe_layout(data_dir)
    return [(op, arg) for op, arg in calls if not layout.match(str(arg))]
