"""Lessons the offline tutor builds from a learner's document: any text, no model.

Headings become plan nodes; each node's explanation is the section's key sentences quoted
with their page; its check is a cloze (short answer) or a multiple-choice question on one
of the section's key terms, graded on the server like any quiz. The whole document is one
lesson; with two or more top-level sections, each is a lesson of its own too (so "teach me
chapter 2" gets chapter 2). Everything is a pure function of the stored text.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from backend.agent.offline.lessons import AskSpec, Lesson, LessonNode
from backend.agent.sentences import Sentence, best_sentences, content_words, key_terms, words
from backend.agent.untrusted import markdown_literal
from shared_contracts.materials import Chunk, Material, MaterialText, PassageSpec
from shared_contracts.questions import Choice, MultipleChoice, QuestionSpec, ShortAnswer

MAX_NODES = 8
QUOTES_PER_NODE = 3
TERMS_PER_NODE = 4
BLANK = "_____"
MIN_TERM_CHARS = 4
TITLE_CHARS = 120
GENERIC_HEADING_WORDS = frozenset({"chapter", "section", "part", "unit", "lesson"})


@dataclass
class Section:
    """A run of chunks under one heading."""

    heading: str
    level: int
    chunks: list[Chunk] = field(default_factory=list)

    @property
    def page(self) -> int:
        return self.chunks[0].page

    def text(self) -> str:
        return "\n\n".join(c.text for c in self.chunks)


@dataclass(frozen=True)
class DocumentLessons:
    """The lessons of one document: the whole of it, then one per top-level section."""

    whole: Lesson
    sections: list[Lesson]

    @property
    def all(self) -> list[Lesson]:
        return [*self.sections, self.whole]

    def pick(self, request: str) -> Lesson:
        """The section lesson the learner's words name ("chapter 2", "photosynthesis"), or
        the whole document when none is named clearly."""
        wanted = [w.lower() for w in re.findall(r"\w+", request)]
        best: tuple[int, int, Lesson] | None = None
        for order, lesson in enumerate(self.sections):
            heading = {w.lower() for w in re.findall(r"\w+", lesson.title)}
            named = [w for w in wanted if w in heading]
            if not [w for w in named if w not in GENERIC_HEADING_WORDS]:
                continue
            score = (len(named), -order)
            if best is None or score > best[:2]:
                best = (*score, lesson)
        return best[2] if best is not None else self.whole


def sections_of(text: MaterialText) -> list[Section]:
    """The document's sections in reading order (consecutive chunks under one heading)."""
    out: list[Section] = []
    for chunk in text.chunks:
        if not out or (out[-1].heading, out[-1].level) != (chunk.heading, chunk.level):
            out.append(Section(chunk.heading, chunk.level))
        out[-1].chunks.append(chunk)
    return out


def document_lessons(material: Material, text: MaterialText) -> DocumentLessons:
    """The lessons `material` teaches (see the module)."""
    sections = [s for s in sections_of(text) if _quotable(s)]
    whole = _lesson(material, _outline(sections), f"doc-{material.id}", "")
    top = _chapter_level(sections)
    groups = _grouped(sections, top) if top else []
    lessons = (
        [
            _lesson(material, parts, f"doc{i}-{material.id}", parts[0].heading)
            for i, parts in enumerate(groups, start=1)
        ]
        if len(groups) >= 2
        else []
    )
    return DocumentLessons(whole=whole, sections=lessons)


def _chapter_level(sections: list[Section]) -> int:
    """The highest heading level with two or more headings (a lone `# Title` above the
    chapters is the document's title, not a chapter); 0 when there is none."""
    levels = sorted({s.level for s in sections if s.heading})
    return next((lv for lv in levels if sum(s.level == lv for s in sections if s.heading) >= 2), 0)


def _quotable(section: Section) -> bool:
    return bool(best_sentences(section.text(), [], 1))


def _grouped(sections: list[Section], top: int) -> list[list[Section]]:
    """Sections gathered under their top-level heading (what comes before the first is
    left out of these: it is in the whole-document lesson)."""
    groups: list[list[Section]] = []
    for section in sections:
        if section.heading and section.level == top:
            groups.append([section])
        elif groups:
            groups[-1].append(section)
    return groups


def _outline(sections: list[Section]) -> list[Section]:
    """At most `MAX_NODES` sections: every section when they fit, else the top-level ones
    (each taking in its subsections' text), then the first `MAX_NODES`."""
    if len(sections) <= MAX_NODES:
        return sections
    top = _chapter_level(sections)
    merged: list[Section] = []
    for section in sections:
        if not merged or (section.heading and section.level <= top):
            merged.append(Section(section.heading, section.level, list(section.chunks)))
        else:
            merged[-1].chunks.extend(section.chunks)
    return merged[:MAX_NODES]


def _lesson(material: Material, sections: list[Section], lesson_id: str, focus: str) -> Lesson:
    doc = _clip(material.title)
    nodes_in = sections[:MAX_NODES]
    terms = {i: _terms(s) for i, s in enumerate(nodes_in)}
    others = [t for ts in terms.values() for t in ts]
    nodes = [_node(i, section, material, terms[i], others) for i, section in enumerate(nodes_in)]
    title = _clip(focus) if focus else doc
    goal = f"Learn “{_clip(focus, 80)}” from “{_clip(doc, 80)}”" if focus else f"Learn from “{doc}”"
    names = [n.title for n in nodes]
    return Lesson(
        id=lesson_id[:64],
        title=title,
        subject="your material",
        blurb=f"from “{doc}”, {len(nodes)} part{'s' if len(nodes) != 1 else ''}",
        keywords=[w.lower() for w in words(title)],
        goal=goal[:200],
        ask=AskSpec(
            prompt=f"Which part of “{doc}” would you like to look at more closely, or what "
            "in it is still unclear?",
            suggestions=[_clip(n, 60) for n in names[:4]],
        ),
        summary=_summary(doc, names, others),
        nodes=nodes,
    )


def _terms(section: Section) -> list[str]:
    text = section.text()
    heading_words = set(content_words(section.heading))
    ranked = [t for t in key_terms(text, 12) if len(t) >= MIN_TERM_CHARS]
    # Terms of the heading first: they are what the section is about.
    return sorted(ranked, key=lambda t: t not in heading_words)[:TERMS_PER_NODE]


def _node(
    index: int, section: Section, material: Material, terms: list[str], others: list[str]
) -> LessonNode:
    title = _clip(section.heading) or f"Part {index + 1} (page {section.page})"
    quotes = _key_sentences(section, terms)
    return LessonNode(
        id=f"s{index + 1}",
        title=title,
        summary=", ".join(terms[:3]),
        teach=_teach(title, material, quotes, terms),
        quiz=_quiz(index, quotes, terms, others),
        reteach=_reteach(quotes),
        passages=[
            PassageSpec(page=page, quote=_flat(s.text), material_id=material.id)
            for page, s in quotes
        ],
    )


def _key_sentences(section: Section, terms: list[str]) -> list[tuple[int, Sentence]]:
    """(page, sentence) of the section's best sentences, in reading order."""
    picked: list[tuple[int, Sentence]] = []
    for chunk in section.chunks:
        for sentence in best_sentences(chunk.text, terms, QUOTES_PER_NODE):
            picked.append((chunk.page, sentence))
    scored = sorted(
        range(len(picked)),
        key=lambda i: (-len(set(terms) & set(content_words(picked[i][1].text))), i),
    )[:QUOTES_PER_NODE]
    return [picked[i] for i in sorted(scored)]


def _teach(
    title: str, material: Material, quotes: list[tuple[int, Sentence]], terms: list[str]
) -> str:
    lines = [f"From *{markdown_literal(_clip(material.title))}*:"]
    lines += [f"> {markdown_literal(_flat(s.text))} (page {page})" for page, s in quotes]
    if terms:
        lines.append("Key terms: " + ", ".join(f"**{markdown_literal(t)}**" for t in terms) + ".")
    text = "\n\n".join(lines)
    return text if len(text) <= 4000 else text[:3999] + "…"


def _reteach(quotes: list[tuple[int, Sentence]]) -> str:
    page, sentence = quotes[0]
    return (
        f"Let's read that part again, slowly (page {page}):\n\n"
        f"> {markdown_literal(_flat(sentence.text))}"
    )[:4000]


def _quiz(
    index: int, quotes: list[tuple[int, Sentence]], terms: list[str], others: list[str]
) -> QuestionSpec:
    """A cloze on a key term in one of the quoted sentences: short answer on even nodes,
    multiple choice (the term among other sections' terms) on odd ones."""
    page, sentence, term = _blank_target(quotes, terms)
    shown = _flat(sentence.text)
    blanked = re.sub(rf"\b{re.escape(term)}\b", BLANK, shown, count=1, flags=re.IGNORECASE)
    where = f"the sentence from page {page}"
    explanation = f"The text reads: “{markdown_literal(shown)}” (page {page})."
    distractors = [o for o in dict.fromkeys(others) if o != term.lower() and o not in shown.lower()]
    if index % 2 == 1 and len(distractors) >= 2:
        texts = [term, *distractors[:3]]
        texts.sort(key=lambda t: hashlib.sha256(f"{t}|{shown}".encode()).hexdigest())
        options = [Choice(id=chr(ord("a") + i), text=t) for i, t in enumerate(texts)]
        correct = next(o.id for o in options if o.text == term)
        return MultipleChoice(
            prompt=f"Which word fills the blank in {where}?\n\n> {markdown_literal(blanked)}",
            options=options,
            correct=correct,
            explanation=explanation,
        )
    return ShortAnswer(
        prompt=f"Fill in the blank in {where} (one word):\n\n> {markdown_literal(blanked)}",
        accepted=list(dict.fromkeys([term, term.lower()])),
        explanation=explanation,
    )


def _blank_target(
    quotes: list[tuple[int, Sentence]], terms: list[str]
) -> tuple[int, Sentence, str]:
    """(page, sentence, the word to blank out): a key term in a quoted sentence if any,
    else the sentence's longest content word."""
    for term in terms:
        for page, sentence in quotes:
            match = re.search(rf"\b{re.escape(term)}\b", sentence.text, re.IGNORECASE)
            if match:
                return page, sentence, match.group()
    page, sentence = quotes[0]
    candidates = [w for w in words(sentence.text) if w.lower() in set(content_words(sentence.text))]
    return page, sentence, max(candidates or words(sentence.text), key=len)


def _summary(doc: str, names: list[str], terms: list[str]) -> str:
    parts = "; ".join(names)
    key = ", ".join(dict.fromkeys(terms[:8]))
    text = f"We read “{markdown_literal(doc)}” part by part: {markdown_literal(parts)}."
    if key:
        text += f" Its key terms: {markdown_literal(key)}."
    return text[:4000]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, width: int = TITLE_CHARS) -> str:
    text = _flat(text)
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"
