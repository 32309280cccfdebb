"""CSS filtering for generated artifacts: no external references may survive.

Conservative by design: CSS that still references the network after the simple rewrites
(e.g. through backslash escapes or `image-set("http…")`) is dropped whole.
"""

from __future__ import annotations

import re

_COMMENT = re.compile(r"/\*.*?(\*/|$)", re.S)
_IMPORT = re.compile(r"@import\b[^;]*;?", re.I)
_URL = re.compile(r"url\(\s*(['\"]?)(.*?)\1\s*\)", re.I | re.S)
_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6})\s?|\\(.)", re.S)
_CONTROL = re.compile(r"[\x00-\x20\x7f]+")
_DANGER = re.compile(
    r"url\((?!['\"]?(#|data:image/))"
    r"|@import|image-set\((?!['\"]?(#|data:image/))"
    r"|expression\(|javascript:|-moz-binding|behavior:"
)


def compact(value: str) -> str:
    """Lower-case `value` with all whitespace and control characters removed."""
    return _CONTROL.sub("", value).lower()


def _unescape(css: str) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(1):
            code = int(m.group(1), 16)
            return chr(code) if 0 < code < 0x110000 else "\ufffd"
        return m.group(2)

    return _ESCAPE.sub(one, css)


def allowed_ref(target: str, *, allow_data: bool) -> bool:
    """True for a same-document `#fragment` (and, if allowed, a `data:image/` URL)."""
    value = compact(target)
    return value.startswith("#") or (allow_data and value.startswith("data:image/"))


def clean_css(css: str, *, allow_data: bool) -> str:
    """Return `css` without comments, `@import` or external `url(...)`; "" if unsure."""
    text = _IMPORT.sub("", _COMMENT.sub("", css))

    def keep_local(m: re.Match[str]) -> str:
        return m.group(0) if allowed_ref(m.group(2), allow_data=allow_data) else "none"

    text = _URL.sub(keep_local, text)
    residue = compact(_COMMENT.sub("", _unescape(text)))
    if not allow_data:
        residue = residue.replace("data:image/", "data:blocked/")
    return "" if _DANGER.search(residue) else text
