"""Quotes of a learner's material, checked verbatim against its stored text (the evidence
gate's idea, for documents): a quote is kept only if it is found in the page it names,
exactly or up to whitespace, case, quote marks and dashes (`evidence_gate.normalise`);
never fuzzily. What is kept is the stored text's own span, not the model's copy of it.
"""

from __future__ import annotations

from backend.core.evidence_gate import normalise, tokens
from shared_contracts.materials import Passage

MIN_QUOTE_WORDS = 3
"""A shorter quote proves nothing (a word or two is found almost anywhere)."""


def find_verbatim(quote: str, text: str) -> tuple[int, int] | None:
    """The span of `text` that `quote` is, exactly or normalised; None when it is not."""
    wanted = quote.strip()
    if not wanted:
        return None
    at = text.find(wanted)
    if at >= 0:
        return at, at + len(wanted)
    folded, _ = normalise(wanted)
    haystack, origin = normalise(text)
    if not folded:
        return None
    at = haystack.find(folded)
    if at < 0:
        return None
    return origin[at], origin[at + len(folded) - 1] + 1


def checked_span(quote: str, page_text: str) -> tuple[int, int] | None:
    """Where `quote` is in the page, or None (not there, or too short to mean anything)."""
    if len(tokens(quote)) < MIN_QUOTE_WORDS:
        return None
    return find_verbatim(quote, page_text)


def checked_quote(quote: str, page_text: str) -> str | None:
    """The stored text `quote` stands for, or None (see `checked_span`); whitespace inside
    it is folded to single spaces for display."""
    span = checked_span(quote, page_text)
    return None if span is None else " ".join(page_text[span[0] : span[1]].split())


def checked_passage(
    quote: str, page_text: str, *, material_id: str, page: int, title: str = ""
) -> Passage | None:
    """A `Passage` of the stored text `quote` stands for, or None."""
    span = checked_span(quote, page_text)
    if span is None:
        return None
    text = " ".join(page_text[span[0] : span[1]].split())
    return Passage(
        material_id=material_id, page=page, quote=text, title=title, start=span[0], end=span[1]
    )
