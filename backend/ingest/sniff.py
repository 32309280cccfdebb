"""What an uploaded file is, from its bytes; its name can only contradict that, never decide it.

PDF: `%PDF-` in the first KiB (the spec allows leading junk). Text: UTF-8 (a BOM allowed)
or UTF-16 with a BOM, with no NUL and few control characters. Markdown: text named `.md`
or `.markdown`, or text with ATX headings. Anything else (an image, a zip, an office file)
is another type: 415. A file named `.pdf` that is text, or named `.md` that is a PDF, is
not what it says: refused, so a mislabelled upload is noticed rather than guessed at.
"""

from __future__ import annotations

import codecs
import re
from pathlib import PurePath

from backend.core.errors import MaterialRejected
from shared_contracts.materials import MaterialKind

PDF_MAGIC = b"%PDF-"
PDF_MAGIC_WITHIN = 1024
MAX_CONTROL_SHARE = 0.01
"""Control characters (besides tab, newline, carriage return, form feed) allowed in text."""

MARKDOWN_NAMES = frozenset({".md", ".markdown", ".mdown", ".mkd"})
TEXT_NAMES = frozenset({".txt", ".text"})
PDF_NAMES = frozenset({".pdf"})
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+\S", re.MULTILINE)
_KNOWN_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"PK\x03\x04", "a zip archive (an office document?)"),
    (b"\xd0\xcf\x11\xe0", "an old office document"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"%!PS", "a PostScript file"),
)


def sniff(data: bytes, filename: str = "") -> MaterialKind:
    """The kind of `data`, or `MaterialRejected` (empty, another type, or not what its
    name says)."""
    if not data.strip():
        raise MaterialRejected("empty", "The file is empty: there is nothing to read.")
    suffix = PurePath(filename).suffix.lower()
    if PDF_MAGIC in data[:PDF_MAGIC_WITHIN]:
        if suffix in MARKDOWN_NAMES | TEXT_NAMES:
            raise MaterialRejected(
                "mismatch", f"The file is named {suffix} but it is a PDF. Rename it to .pdf."
            )
        return "pdf"
    text = decode_text(data)
    if text is None:
        what = next((name for magic, name in _KNOWN_MAGIC if data.startswith(magic)), "")
        detail = f"it is {what}" if what else "it is neither a PDF nor text"
        raise MaterialRejected(
            "unsupported_type",
            f"This file cannot be read: {detail}. Upload a PDF, Markdown or plain-text file.",
        )
    if suffix in PDF_NAMES:
        raise MaterialRejected(
            "mismatch", "The file is named .pdf but it is not a PDF (its bytes are plain text)."
        )
    if suffix in MARKDOWN_NAMES:
        return "markdown"
    if suffix in TEXT_NAMES:
        return "text"
    return "markdown" if _ATX_HEADING.search(text) else "text"


def decode_text(data: bytes) -> str | None:
    """`data` as text (UTF-8, or UTF-16 with a BOM), or None when it is not text."""
    try:
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            text = data.decode("utf-16")
        else:
            text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if "\x00" in text:
        return None
    controls = len(_CONTROL.findall(text))
    if controls > MAX_CONTROL_SHARE * len(text):
        return None
    return text
