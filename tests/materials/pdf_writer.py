"""A tiny PDF writer for tests and the bench: text pages in Helvetica, image-only pages (a
"scan"), and encryption through pypdf. Written from the PDF primitives (objects, a content
stream, an xref table), so the tests need no PDF-writing library.
"""

from __future__ import annotations

import io

LINE_HEIGHT = 14
TOP = 750
LINES_PER_PAGE = 50


def _escape(text: str) -> bytes:
    raw = text.encode("latin-1", "replace")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def _text_stream(lines: list[str]) -> bytes:
    out = [b"BT /F1 11 Tf 72 %d Td %d TL" % (TOP, LINE_HEIGHT)]
    for i, line in enumerate(lines):
        out.append((b"" if i == 0 else b"T* ") + b"(" + _escape(line) + b") Tj")
    out.append(b"ET")
    return b"\n".join(out)


_IMAGE_STREAM = b"q 300 0 0 300 150 300 cm /Im1 Do Q"
_IMAGE = (
    b"<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray"
    b" /BitsPerComponent 8 /Length 4 >>\nstream\n\x00\xff\xff\x00\nendstream"
)


def make_pdf(pages: list[list[str] | None], *, title: str = "") -> bytes:
    """A PDF with one page per item: a list of text lines, or None for a page that is
    only an image (no text layer)."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below
    pages_obj = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    image = add(_IMAGE)
    kids = []
    for lines in pages:
        stream = _IMAGE_STREAM if lines is None else _text_stream(lines)
        contents = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        resources = (
            b"<< /XObject << /Im1 %d 0 R >> >>" % image
            if lines is None
            else b"<< /Font << /F1 %d 0 R >> >>" % font
        )
        kids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792]"
                b" /Resources %s /Contents %d 0 R >>" % (pages_obj, resources, contents)
            )
        )
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    objects[pages_obj - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    info = add(b"<< /Title (" + _escape(title) + b") >>") if title else 0
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    trailer = b"<< /Size %d /Root %d 0 R" % (len(objects) + 1, catalog)
    if info:
        trailer += b" /Info %d 0 R" % info
    out.write(b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


def text_pdf(paragraphs_per_page: list[list[str]], *, title: str = "") -> bytes:
    """A text PDF: each page's paragraphs wrapped at ~90 characters, a blank line between."""
    pages: list[list[str] | None] = []
    for paragraphs in paragraphs_per_page:
        lines: list[str] = []
        for paragraph in paragraphs:
            lines.extend(_wrap(paragraph))
            lines.append("")
        pages.append(lines[:LINES_PER_PAGE])
    return make_pdf(pages, title=title)


def _wrap(text: str, width: int = 90) -> list[str]:
    lines, current = [], ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    return [*lines, current] if current else lines


def encrypted(pdf: bytes, *, user_password: str = "secret", owner_password: str = "owner") -> bytes:
    """`pdf` encrypted (AES-128) with pypdf; an empty user password opens it for reading."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
