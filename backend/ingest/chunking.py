"""A document's pages cut into chunks by heading and paragraph, each with its page and span.

Headings: Markdown ATX (`## Title`, outside code fences) and setext (`Title` over `===`);
in PDFs and plain text, lines that read as headings (numbered like `2.1 Halves`, `Chapter
3 ...`, or short all-capitals lines). A section runs on across page breaks. Paragraphs
are runs of non-blank lines; one longer than `MAX_CHARS` is cut at sentence ends, and
neighbours under the same heading on the same page are merged up to `TARGET_CHARS`.
A chunk never spans two pages, and its text is exactly its span of the page's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared_contracts.materials import Chunk, MaterialKind

TARGET_CHARS = 900
MAX_CHARS = 1600
HEADING_MAX_CHARS = 90
HEADING_MAX_WORDS = 12

_LINE = re.compile(r"[^\n]*\n?")
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_NUMBERED = re.compile(
    r"^(?:(?:chapter|section|part|unit|lesson)\s+)?(\d{1,3}(?:\.\d{1,3}){0,3})\.?\s+(\S.*)$",
    re.IGNORECASE,
)
_LETTER = re.compile(r"[^\W\d_]")
_NAMED = re.compile(r"^(?:chapter|part|unit|lesson)\s+\w+\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+")
_INLINE_MARKUP = re.compile(r"\[([^\]]*)\]\([^)]*\)|[*_`]+")


@dataclass(frozen=True, slots=True)
class Heading:
    title: str
    level: int


@dataclass(slots=True)
class _Unit:
    start: int
    end: int


def chunk_pages(pages: list[str], kind: MaterialKind) -> list[Chunk]:
    """Every page's chunks, in reading order."""
    chunks: list[Chunk] = []
    heading = Heading("", 0)
    for number, text in enumerate(pages, start=1):
        for found, units in _sections(text, kind, heading):
            heading = found
            for unit in _merge(_split_long(text, units)):
                body = text[unit.start : unit.end]
                if body.strip():
                    chunks.append(
                        Chunk(
                            page=number,
                            start=unit.start,
                            end=unit.end,
                            text=body,
                            heading=heading.title,
                            level=heading.level,
                        )
                    )
    return chunks


def _sections(text: str, kind: MaterialKind, heading: Heading) -> list[tuple[Heading, list[_Unit]]]:
    """The page as (heading, its paragraphs) runs, starting under `heading`."""
    out: list[tuple[Heading, list[_Unit]]] = [(heading, [])]
    lines = [(m.start(), m.group()) for m in _LINE.finditer(text) if m.group()]
    in_fence = False
    paragraph: _Unit | None = None
    for i, (at, raw) in enumerate(lines):
        line = raw.rstrip("\n")
        if kind == "markdown" and _FENCE.match(line):
            in_fence = not in_fence
        found = None if in_fence else _heading(line, kind)
        if found is None and kind == "markdown" and not in_fence and paragraph is not None:
            setext = _SETEXT.match(line)
            if setext and i > 0 and lines[i - 1][0] == paragraph.start:
                # The paragraph so far is one line: it was a setext heading.
                title = plain_heading(lines[i - 1][1].strip())
                out[-1][1].pop()
                out.append((Heading(title, 1 if setext.group(1)[0] == "=" else 2), []))
                paragraph = None
                continue
        if found is not None:
            out.append((found, []))
            paragraph = None
        elif not in_fence and (not line.strip() or (kind == "markdown" and _SETEXT.match(line))):
            # a blank line, or a thematic break (`---` after a blank line): no text
            paragraph = None
        elif paragraph is None:
            paragraph = _Unit(at, at + len(line))
            out[-1][1].append(paragraph)
        else:
            paragraph.end = at + len(line)
    return out


def _heading(line: str, kind: MaterialKind) -> Heading | None:
    atx = _ATX.match(line)
    if atx and kind != "pdf":
        title = plain_heading(atx.group(2))
        return Heading(title, len(atx.group(1))) if title else None
    if kind == "markdown":
        return None
    return heading_like(line)


def heading_like(line: str) -> Heading | None:
    """A PDF's or plain text's line that reads as a heading, or None. (Cheap tests first:
    it runs on every line of every page.)"""
    start = line.lstrip()[:1]
    if len(line) > 2 * HEADING_MAX_CHARS or not (start.isdigit() or start.isupper()):
        return None  # a heading starts with its number, "Chapter …", or is ALL CAPS
    text = " ".join(line.split())
    if not text or len(text) > HEADING_MAX_CHARS or text[-1] in ".,;:":
        return None
    words = text.count(" ") + 1
    if words > HEADING_MAX_WORDS or _LETTER.search(text) is None:
        return None
    numbered = _NUMBERED.match(text)
    if numbered and numbered.group(2)[0].isupper():
        return Heading(text, numbered.group(1).count(".") + 1)
    if _NAMED.match(text):
        return Heading(text, 1)
    if text.isupper() and words <= 8 and len(_LETTER.findall(text)) >= 4:
        return Heading(text, 1)  # every cased letter upper case: an ALL-CAPS line
    return None


def plain_heading(title: str) -> str:
    """A heading's text without inline Markdown (emphasis, code marks, link targets)."""
    return " ".join(_INLINE_MARKUP.sub(lambda m: m.group(1) or "", title).split())


def _split_long(text: str, units: list[_Unit]) -> list[_Unit]:
    """Paragraphs longer than `MAX_CHARS` cut at sentence ends (or, lacking any, at line
    ends, then hard) into pieces of about `TARGET_CHARS`."""
    out: list[_Unit] = []
    for unit in units:
        start = unit.start
        while unit.end - start > MAX_CHARS:
            cut = _cut_point(text, start, unit.end)
            out.append(_Unit(start, cut))
            start = cut
            while start < unit.end and text[start].isspace():
                start += 1
        if start < unit.end:
            out.append(_Unit(start, unit.end))
    return out


def _cut_point(text: str, start: int, end: int) -> int:
    window = text[start : min(end, start + MAX_CHARS)]
    best = -1
    for match in _SENTENCE_END.finditer(window):
        if match.start() > TARGET_CHARS // 2:
            best = match.start()
            if best >= TARGET_CHARS:
                break
    if best < 0:
        newline = window.rfind("\n", TARGET_CHARS // 2)
        space = window.rfind(" ", TARGET_CHARS // 2)
        best = newline if newline > 0 else space if space > 0 else TARGET_CHARS
    return start + best + (1 if best < len(window) and window[best] in ".!?\"')]" else 0)


def _merge(units: list[_Unit]) -> list[_Unit]:
    """Neighbouring paragraphs joined while the joint span stays within `TARGET_CHARS`."""
    out: list[_Unit] = []
    for unit in units:
        if out and unit.end - out[-1].start <= TARGET_CHARS:
            out[-1] = _Unit(out[-1].start, unit.end)
        else:
            out.append(_Unit(unit.start, unit.end))
    return out
