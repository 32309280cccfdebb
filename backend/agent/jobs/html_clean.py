"""`check_demo_html`: size limit, and no external network references left in the markup.

This is the second line of defence. The first is the sandbox the UI renders demos in
(`sandbox="allow-scripts"`, never `allow-same-origin`) plus the CSP meta `demo_srcdoc`
prepends (`default-src 'none'; script-src 'unsafe-inline'; …`): that CSP is why
`fetch`/`XMLHttpRequest`/`WebSocket` in inline scripts may stay — they cannot connect.
Markup that loads or leaks by itself (`<script src>`, `<link>`, `<img src=http…>`,
CSS `url(http…)`, `<meta http-equiv=refresh>`, `<base>`, frames) is removed here.
"""

from __future__ import annotations

import re
from html import escape
from html.parser import HTMLParser

from backend.agent.jobs.css_clean import allowed_ref, clean_css
from backend.agent.jobs.errors import UnsafeArtifact

MAX_DEMO_BYTES = 200_000

_URL_ATTRS = frozenset(
    """src href xlink:href action formaction data poster background srcset imagesrcset ping
    cite codebase manifest longdesc lowsrc dynsrc icon profile archive classid itemtype""".split()  # noqa: SIM905
)
_DATA_OK = frozenset({"src", "href", "xlink:href"})  # an inline data:image/ is no request
_DROP_TAG = frozenset({"link", "base", "embed", "frame", "param"})
_DROP_WITH_CONTENT = frozenset({"iframe", "object", "applet", "frameset", "portal", "noembed"})
_RAW_TEXT = frozenset({"script", "style"})
_VOID = frozenset(
    "area base br col embed hr img input link meta param source track wbr frame".split()  # noqa: SIM905
)


def _clean_attr(name: str, value: str) -> str:
    return clean_css(value, allow_data=True) if name == "style" else value


def _attr_ok(name: str, value: str | None) -> bool:
    if value is None or name not in _URL_ATTRS:
        return True
    return allowed_ref(value, allow_data=name in _DATA_OK)


class _Cleaner(HTMLParser):
    """Re-emits the page token by token from what the parser understood.

    Tags are always re-rendered from the parsed attributes and `<` in text is escaped, so
    the browser cannot see markup this parser took for text; comments and processing
    instructions are dropped for the same reason.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.out: list[str] = []
        self.suppress: list[str] = []  # open elements whose whole content is dropped
        self.raw: str | None = None  # inside <script> or <style>

    def _tag(self, tag: str, attrs: list[tuple[str, str | None]], close: bool) -> None:
        if self.suppress:
            if tag in _DROP_WITH_CONTENT and not close:
                self.suppress.append(tag)
            return
        if tag in _DROP_TAG or (tag == "meta" and any(k == "http-equiv" for k, _ in attrs)):
            return
        if tag in _DROP_WITH_CONTENT:
            if not close:
                self.suppress.append(tag)
            return
        rendered = "".join(
            f" {k}" if v is None else f' {k}="{escape(_clean_attr(k, v), quote=True)}"'
            for k, v in attrs
            if _attr_ok(k, v)
        )
        self.out.append(f"<{tag}{rendered}{' /' if close else ''}>")
        self.raw = tag if tag in _RAW_TEXT and not close else None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag, attrs, close=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag, attrs, close=True)

    def handle_endtag(self, tag: str) -> None:
        self.raw = None
        if self.suppress:
            if tag == self.suppress[-1]:
                self.suppress.pop()
            return
        if tag not in _DROP_TAG and tag not in _DROP_WITH_CONTENT and tag not in _VOID:
            self.out.append(f"</{tag}>")

    def _emit(self, text: str) -> None:
        if not self.suppress:
            self.out.append(text)

    def handle_data(self, data: str) -> None:
        if self.raw is None:
            self._emit(data.replace("<", "&lt;"))
            return
        # A browser ends <script> at "</script x>"; this parser does not: refuse the page.
        if re.search(rf"</{self.raw}[\s/>]", data, re.I):
            raise UnsafeArtifact(f"ambiguous </{self.raw}> inside a {self.raw} element")
        self._emit(clean_css(data, allow_data=True) if self.raw == "style" else data)

    def handle_entityref(self, name: str) -> None:
        self._emit(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self._emit(f"&#{name};")

    def handle_decl(self, decl: str) -> None:
        if decl.lower().startswith("doctype"):
            self._emit("<!DOCTYPE html>")


def check_demo_html(html: str, *, max_bytes: int = MAX_DEMO_BYTES) -> str:
    """Return `html` with external network references removed; raise `UnsafeArtifact`
    when it is empty or larger than `max_bytes` (UTF-8)."""
    size = len(html.encode())
    if size > max_bytes:
        raise UnsafeArtifact(f"demo page is {size} bytes; the limit is {max_bytes}")
    if not html.strip():
        raise UnsafeArtifact("demo page is empty")
    cleaner = _Cleaner()
    cleaner.feed(html)
    cleaner.close()
    cleaned = "".join(cleaner.out)
    if not cleaned.strip():
        raise UnsafeArtifact("nothing remains of the demo page after removing external references")
    return cleaned
