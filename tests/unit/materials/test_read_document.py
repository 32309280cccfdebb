"""Reading an upload: the type from the bytes, pages kept, and a clear reason for every file
that cannot become a material (encrypted, scanned, mislabelled, empty, another type)."""

from __future__ import annotations

import pytest

from backend.core.errors import MaterialRejected
from backend.ingest import read_document
from tests.materials.pdf_writer import encrypted, make_pdf, text_pdf

LIMIT = 5_000_000

THREE_PAGES = text_pdf(
    [
        ["1 Fractions", "A fraction names part of a whole. The bottom number counts the parts."],
        ["1.1 Halves", "Two halves make one whole, and each half is one of two equal parts."],
        ["2 Adding", "To add fractions with the same denominator, add the numerators only."],
    ],
    title="A fractions primer",
)


def _reason(data: bytes, name: str) -> str:
    with pytest.raises(MaterialRejected) as caught:
        read_document(data, name, max_bytes=LIMIT)
    assert str(caught.value)  # a sentence the learner can act on
    return caught.value.reason


def test_a_multi_page_pdf_keeps_its_pages_and_headings():
    doc = read_document(THREE_PAGES, "primer.pdf", max_bytes=LIMIT)
    assert doc.kind == "pdf"
    assert doc.title == "A fractions primer"  # the PDF's own title
    assert len(doc.text.pages) == 3
    assert "add the numerators only" in doc.text.pages[2]
    by_page = {c.page: c for c in doc.text.chunks}
    assert by_page[2].heading == "1.1 Halves"
    assert by_page[2].level == 2
    assert by_page[3].heading == "2 Adding"
    for chunk in doc.text.chunks:
        assert doc.text.pages[chunk.page - 1][chunk.start : chunk.end] == chunk.text


def test_progress_is_reported_per_page():
    seen: list[tuple[str, int, int]] = []
    read_document(THREE_PAGES, "p.pdf", max_bytes=LIMIT, progress=lambda *a: seen.append(a))
    assert seen == [("reading", 1, 3), ("reading", 2, 3), ("reading", 3, 3), ("indexing", 3, 3)]


def test_a_pdf_encrypted_with_a_password_is_refused():
    assert _reason(encrypted(THREE_PAGES), "locked.pdf") == "encrypted"


def test_a_pdf_restricted_only_by_an_owner_password_is_read():
    doc = read_document(encrypted(THREE_PAGES, user_password=""), "r.pdf", max_bytes=LIMIT)
    assert "Two halves make one whole" in doc.text.pages[1]


def test_a_scanned_pdf_without_a_text_layer_is_refused():
    assert _reason(make_pdf([None, None]), "scan.pdf") == "no_text"


def test_a_damaged_pdf_is_refused():
    assert _reason(THREE_PAGES[: len(THREE_PAGES) // 3], "cut.pdf") == "unreadable"
    assert _reason(b"%PDF-1.4\n" + b"\x00garbage" * 50, "junk.pdf") == "unreadable"


def test_text_named_pdf_is_not_what_it_says():
    assert _reason(b"Plain notes, not a PDF at all.\n", "notes.pdf") == "mismatch"


def test_a_pdf_named_markdown_is_not_what_it_says():
    assert _reason(THREE_PAGES, "notes.md") == "mismatch"


@pytest.mark.parametrize("data", [b"", b"   \n\n\t ", "\ufeff".encode()])
def test_an_empty_file_is_refused(data):
    assert _reason(data, "empty.md") == "empty"


@pytest.mark.parametrize(
    "data",
    [b"\x89PNG\r\n\x1a\n" + bytes(range(256)), b"PK\x03\x04" + bytes(200), bytes(range(256)) * 4],
)
def test_another_type_is_refused_whatever_its_name(data):
    assert _reason(data, "notes.txt") == "unsupported_type"


def test_over_the_limit_is_refused_before_reading():
    with pytest.raises(MaterialRejected) as caught:
        read_document(b"x" * 101, "big.txt", max_bytes=100)
    assert caught.value.reason == "too_large"


def test_markdown_title_headings_and_one_page():
    text = "# Photosynthesis\n\nIntro words here.\n\n## Light\n\nLeaves catch **light**.\n"
    doc = read_document(text.encode(), "notes.md", max_bytes=LIMIT)
    assert (doc.kind, doc.title, len(doc.text.pages)) == ("markdown", "Photosynthesis", 1)
    assert [(c.heading, c.level) for c in doc.text.chunks] == [
        ("Photosynthesis", 1),
        ("Light", 2),
    ]


def test_text_is_sniffed_from_its_bytes_not_its_name():
    assert read_document(b"# Title\n\nBody.\n", "notes", max_bytes=LIMIT).kind == "markdown"
    assert read_document(b"Just words.\n", "notes", max_bytes=LIMIT).kind == "text"
    assert read_document(b"# Title\n\nBody.\n", "notes.txt", max_bytes=LIMIT).kind == "text"
    utf16 = "# Titel\n\nÜber Brüche.\n".encode("utf-16")
    assert "Über Brüche" in read_document(utf16, "n.md", max_bytes=LIMIT).text.pages[0]


def test_form_feeds_split_a_text_file_into_pages():
    doc = read_document(b"First page text.\fSecond page text.\n", "t.txt", max_bytes=LIMIT)
    assert doc.text.pages == ["First page text.", "Second page text.\n"]
    assert [c.page for c in doc.text.chunks] == [1, 2]
