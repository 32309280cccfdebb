"""Chunks by heading and paragraph: each a span of one page, under the right heading."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from backend.ingest.chunking import MAX_CHARS, TARGET_CHARS, chunk_pages, heading_like


def test_markdown_headings_outside_code_fences():
    page = (
        "# Lists\n\nA list holds items.\n\n```python\n# not a heading\nx = [1]\n```\n\n"
        "Setext Title\n============\n\nUnder setext.\n\n## Slices\n\nA slice takes a part.\n"
    )
    chunks = chunk_pages([page], "markdown")
    headings = [c.heading for c in chunks]
    assert "not a heading" not in " ".join(headings)
    assert headings[-1] == "Slices"
    assert ("Setext Title", 1) in [(c.heading, c.level) for c in chunks]
    assert any("# not a heading" in c.text for c in chunks)  # code stays in the text


def test_neighbouring_paragraphs_merge_up_to_the_target():
    paragraphs = [f"Paragraph {i} says something short." for i in range(40)]
    chunks = chunk_pages(["\n\n".join(paragraphs)], "text")
    assert len(chunks) > 1
    assert all(len(c.text) <= TARGET_CHARS for c in chunks)
    assert "Paragraph 0" in chunks[0].text and "Paragraph 1 " in chunks[0].text


def test_a_long_paragraph_is_cut_at_sentence_ends():
    sentence = "Chlorophyll absorbs red and blue light but reflects green. "
    chunks = chunk_pages([sentence * 80], "text")
    assert len(chunks) > 2
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert all(c.text.rstrip().endswith(".") for c in chunks)


def test_a_section_runs_on_across_pages():
    chunks = chunk_pages(["2 Photosynthesis\nLeaves make sugar.", "More about leaves."], "pdf")
    assert [(c.page, c.heading) for c in chunks] == [
        (1, "2 Photosynthesis"),
        (2, "2 Photosynthesis"),
    ]


def test_heading_like_lines():
    assert heading_like("2.1 Adding halves") is not None
    assert heading_like("2.1 Adding halves").level == 2
    assert heading_like("Chapter 3 Light") is not None
    assert heading_like("INTRODUCTION") is not None
    assert heading_like("1. Add the numerators.") is None  # a list item, ends a sentence
    assert heading_like("3 apples and 2 pears") is None
    assert heading_like("42") is None
    assert heading_like("This line is an ordinary sentence of body text, it goes on") is None


@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=400), max_size=4))
def test_every_chunk_is_exactly_its_span(pages):
    for kind in ("markdown", "text", "pdf"):
        for chunk in chunk_pages(pages, kind):
            assert pages[chunk.page - 1][chunk.start : chunk.end] == chunk.text
            assert chunk.text.strip()
