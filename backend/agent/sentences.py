"""Sentences and key terms of a document's text, for the offline tutor and researcher: pure,
deterministic, and every sentence an exact span of the text it came from (so a quote of it
passes the verbatim check)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

_SENTENCE = re.compile(r"\S.*?(?:[.!?][\"')\]]?(?=\s|$)|(?=\n[ \t]*\n)|$)", re.DOTALL)
"""A sentence ends at . ! or ? (maybe closed by a quote or bracket) before a space, or at a
blank line, or where the text ends."""
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|[A-Za-z]")
_STOPWORD_TEXT = (
    "a about above after again against all also am an and any are as at be because been "
    "before being below between both but by can could did do does doing down during each "
    "either every few for from further had has have having he her here hers him his how i "
    "if in into is it its itself just may me might more most much must my no nor not now "
    "of off on once one only or other our out over own same she should so some such than "
    "that the their them then there these they this those through to too two under until "
    "up upon us very was we were what when where which while who whom why will with would "
    "you your many like used use uses using called make makes made get gets way ways well "
    "first second next last new example examples thing things part parts "
)
_STOP = frozenset(_STOPWORD_TEXT.split())
MIN_SENTENCE_WORDS = 5
MAX_SENTENCE_CHARS = 400


@dataclass(frozen=True, slots=True)
class Sentence:
    start: int
    end: int
    text: str


def sentences(text: str) -> list[Sentence]:
    """The sentences of `text` (line breaks inside one are kept: it is an exact span)."""
    out = []
    for match in _SENTENCE.finditer(text):
        body = match.group().rstrip()
        if body:
            out.append(Sentence(match.start(), match.start() + len(body), body))
    return out


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def content_words(text: str) -> list[str]:
    """The words of `text` that carry meaning (lower-cased, stopwords and short ones out)."""
    return [w.lower() for w in words(text) if len(w) > 2 and w.lower() not in _STOP]


def key_terms(text: str, limit: int = 8) -> list[str]:
    """The most frequent content words of `text` (ties in order of appearance)."""
    counts = Counter(content_words(text))
    order = {w: i for i, w in reversed(list(enumerate(content_words(text))))}
    ranked = sorted(counts, key=lambda w: (-counts[w], order[w]))
    return ranked[:limit]


def teachable(sentence: Sentence) -> bool:
    """A whole sentence worth quoting: long enough to say something, short enough to read,
    and not a heading, a list marker or code."""
    text = sentence.text
    return (
        len(words(text)) >= MIN_SENTENCE_WORDS
        and len(text) <= MAX_SENTENCE_CHARS
        and text[-1] in ".!?\"')]"
        and not text.lstrip().startswith(("#", "```", "|", "<"))
    )


def best_sentences(text: str, terms: list[str], limit: int) -> list[Sentence]:
    """The `limit` teachable sentences of `text` mentioning most of `terms` (earlier first
    among equals), returned in reading order."""
    wanted = set(terms)
    scored = [
        (-len(wanted & set(content_words(s.text))), i, s)
        for i, s in enumerate(sentences(text))
        if teachable(s)
    ]
    chosen = sorted(scored)[:limit]
    return [s for _, _, s in sorted(chosen, key=lambda item: item[1])]
