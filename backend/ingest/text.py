"""What every document's text goes through before it is stored, whatever it was read from."""

from __future__ import annotations

import re

_UNWANTED = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Text safe to store and index: no control characters (bar tab, newline, form feed),
    no lone surrogates, newlines as `\\n`."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _UNWANTED.sub("", text)
