"""Model text made ready for the markdown renderer's math (remark-math + KaTeX): LaTeX
delimiters become dollar forms, and a display formula written on one line of its own
(`$$x$$`, which remark-math reads as inline math at text size) becomes a display block;
and math as plain text where nothing typesets it (graph labels, a sentence)."""

from __future__ import annotations

import re

# A math span never crosses a blank line (a paragraph break), nor starts after a backslash
# (`\\(` is an escaped backslash followed by a parenthesis).
_BODY = r"((?:(?!\n[ \t]*\n).)+?)"
_DISPLAY = re.compile(r"(?<!\\)\\\[" + _BODY + r"\\\]", re.S)
_INLINE = re.compile(r"(?<!\\)\\\(" + _BODY + r"\\\)", re.S)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TICKS = re.compile(r"`+")
_MASK = re.compile("\ue000(\\d+)\ue001")
_ONE_LINE_DISPLAY = re.compile(r"^( {0,3})\$\$([^$\n]*[^$\s][^$\n]*)\$\$[ \t]*$", re.M)


def normalise_math(text: str) -> str:
    """`\\( x \\)` → `$x$` and `\\[ x \\]` → `$$x$$` (own lines when it stood alone), and a
    line that is only `$$x$$` → `$$`, `x`, `$$` on lines of their own; except inside fenced
    code blocks and inline code spans. Idempotent when delimiters are paired."""
    return "".join(chunk if code else _outside_spans(chunk) for chunk, code in _fenced(text))


def _fenced(text: str) -> list[tuple[str, bool]]:
    """Split into (chunk, is_fenced_code) runs of whole lines, CommonMark-style fences."""
    chunks: list[tuple[str, bool]] = []
    prose: list[str] = []
    code: list[str] = []
    fence = ""
    for line in text.splitlines(keepends=True):
        if fence:
            code.append(line)
            closing = _FENCE.match(line)
            if closing and closing.group(1).startswith(fence) and not line.strip(" \t\r\n`~"):
                chunks.append(("".join(code), True))
                code, fence = [], ""
            continue
        opening = _FENCE.match(line)
        if opening:
            chunks.append(("".join(prose), False))
            prose, code, fence = [], [line], opening.group(1)
        else:
            prose.append(line)
    chunks.append(("".join(prose), False))
    if code:  # an unclosed fence runs to the end of the text
        chunks.append(("".join(code), True))
    return [c for c in chunks if c[0]]


def _outside_spans(text: str) -> str:
    """Convert math in `text` while leaving inline code spans (`` `x` ``, ``` ``x`` ```) alone."""
    if "\\" not in text and "$$" not in text:
        return text
    if "\ue000" in text:  # our mask marker already present: leave the text as it is
        return text
    spans: list[str] = []
    masked: list[str] = []
    pos = 0
    search = 0
    while (run := _TICKS.search(text, search)) is not None:
        close = next(
            (m for m in _TICKS.finditer(text, run.end()) if len(m.group()) == len(run.group())),
            None,
        )
        if close is None:  # an unmatched backtick run is literal text
            search = run.end()
            continue
        masked.append(text[pos : run.start()])
        masked.append(f"\ue000{len(spans)}\ue001")
        spans.append(text[run.start() : close.end()])
        pos = search = close.end()
    masked.append(text[pos:])
    converted = _INLINE.sub(_inline, _DISPLAY.sub(_display, "".join(masked)))
    converted = _ONE_LINE_DISPLAY.sub(_own_lines, converted)
    return _MASK.sub(lambda m: spans[int(m.group(1))], converted)


def _own_lines(match: re.Match[str]) -> str:
    indent, body = match.group(1), match.group(2).strip()
    return f"{indent}$$\n{indent}{body}\n{indent}$$"


def _inline(match: re.Match[str]) -> str:
    body = match.group(1).strip()
    return f"${body}$" if body else match.group(0)


def _display(match: re.Match[str]) -> str:
    body = match.group(1).strip()
    if not body:
        return match.group(0)
    text = match.string
    before = text[: match.start()].rpartition("\n")[2]
    after = text[match.end() :].partition("\n")[0]
    if before.strip() or after.strip():
        return f"$${body}$$"
    return f"$$\n{body}\n$$"


_FRACTION = re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}")
_SYMBOLS = {r"\times": "×", r"\cdot": "·", r"\div": "÷", r"\le": "≤", r"\ge": "≥", r"\ne": "≠"}


def plain_math(text: str) -> str:
    """Inline math as plain text for labels React Flow cannot typeset: $\\frac{1}{2}$ → 1/2."""
    text = _FRACTION.sub(lambda m: f"{_operand(m[1])}/{_operand(m[2])}", text)
    for command, symbol in _SYMBOLS.items():
        text = re.sub(re.escape(command) + r"(?![A-Za-z])", symbol, text)
    return text.replace("$$", "").replace("$", "")


_EMPHASIS = re.compile(
    r"(\*\*|\*|`)(?=\S)(.+?)(?<=\S)\1"
    r"|(?<!\w)(__|_)(?=\S)(.+?)(?<=\S)\3(?!\w)"  # underscores inside a word are no emphasis
)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def plain_words(text: str) -> str:
    """A short answer as a learner would type it: math as plain text, and no Markdown
    emphasis, code ticks or link syntax ("**1/2** of `x`" → "1/2 of x")."""
    text = _LINK.sub(lambda m: m[1], plain_math(text))
    previous = None
    while previous != text:  # nested emphasis: ***x*** → x
        previous, text = text, _EMPHASIS.sub(lambda m: m[2] or m[4], text)
    return text


def _operand(term: str) -> str:
    """A fraction's top or bottom, bracketed when it is more than one term: 1+2 → (1+2)."""
    term = term.strip()
    return f"({term})" if re.search(r"[-+\s]", term.lstrip("-")) else term
