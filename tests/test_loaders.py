import io

import pytest
from pypdf import PdfWriter

from components.core.loaders import MAX_UPLOAD_BYTES, DocumentError, read_path, read_upload


def text_pdf(lines: list[str]) -> bytes:
    """A minimal valid one-page PDF whose content stream draws the lines in Helvetica."""
    ops = ["BT", "/F1 12 Tf", "72 720 Td", "14 TL"]
    for line in lines:
        ops.append(f"({line}) Tj T*")
    ops.append("ET")
    stream = "\n".join(ops).encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{i} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for off in offsets:
        out.write(f"{off:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def blank_pdf() -> bytes:
    w = PdfWriter()
    w.add_blank_page(width=200, height=200)
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


def test_text_and_markdown_utf8():
    assert read_upload("a.txt", "Héllo wörld\n\nSecond".encode()) == "Héllo wörld\n\nSecond"
    assert read_upload("a.md", b"\xef\xbb\xbf# Title\n") == "# Title\n"  # BOM dropped


def test_text_fallback_decoding():
    assert read_upload("a.txt", "café au lait".encode("cp1252")) == "café au lait"


def test_pdf_with_text():
    text = read_upload("paper.pdf", text_pdf(["The capital of France is Paris.", "Second line here."]))
    assert "The capital of France is Paris." in text
    assert "Second line here." in text


def test_pdf_without_text_is_refused():
    with pytest.raises(DocumentError, match="no extractable text"):
        read_upload("scan.pdf", blank_pdf())


def test_broken_pdf_is_refused_with_one_line():
    data = text_pdf(["Some words in a PDF."])
    with pytest.raises(DocumentError) as err:
        read_upload("cut.pdf", data[: len(data) // 3])
    msg = str(err.value)
    assert msg.startswith("cut.pdf is not a readable PDF") and "\n" not in msg


def test_not_a_pdf_at_all():
    with pytest.raises(DocumentError, match="not a readable PDF|no extractable text"):
        read_upload("x.pdf", b"hello, I am not a PDF")


def test_docx():
    from docx import Document

    d = Document()
    d.add_paragraph("First paragraph.")
    d.add_paragraph("")
    d.add_paragraph("Second paragraph.")
    buf = io.BytesIO()
    d.save(buf)
    assert read_upload("notes.docx", buf.getvalue()) == "First paragraph.\n\nSecond paragraph."


def test_broken_docx():
    with pytest.raises(DocumentError, match="not a readable .docx"):
        read_upload("notes.docx", b"PK\x03\x04 not really a zip")


def test_html_blocks_and_scripts():
    html = b"""<html><head><title>T</title><style>p {color: red}</style></head>
    <body><script>var x = 1;</script><h1>Heading</h1><p>First <b>bold</b> para.</p>
    <div>Second
    para.</div><ul><li>one</li><li>two</li></ul></body></html>"""
    assert read_upload("page.html", html) == "Heading\n\nFirst bold para.\n\nSecond para.\n\none\n\ntwo"


@pytest.mark.parametrize(
    "html, text",
    [
        (b"<span><p>a</span>b", "a\n\nb"),  # an end tag closes the block opened inside it
        (b"<p>a</span>b</p>c", "ab\n\nc"),  # an end tag with nothing open of its name is ignored
        (b"a<br>b<hr/>c", "a\n\nb\n\nc"),
        (b"<p>caf&eacute; &amp; &#x41;<!-- hidden --></p>", "caf\u00e9 & A"),
        (b"<div><noscript><p>no</p></noscript>yes</div>", "yes"),
        (b"<div>" * 50 + b"deep" + b"<p>er", "deep\n\ner"),  # never closed
    ],
)
def test_html_text(html, text):
    assert read_upload("page.html", html) == text


def test_html_nested_deep_is_read_in_one_pass():
    """100,000 nested <div> (the tag limit's worth of tags): the text, at once."""
    import time

    for opened, closed in ((b"<div>", b"</div>"), (b"<div>", b"</span>"), (b"<div>", b"")):
        html = opened * 100_000 + b"needle" + closed * 99_999
        t0 = time.monotonic()
        assert read_upload("deep.html", html) == "needle"
        assert time.monotonic() - t0 < 10


@pytest.mark.parametrize(
    "name, data, pattern",
    [
        ("empty.txt", b"", "empty"),
        ("blank.txt", b"  \n\n ", "empty"),
        ("bin.txt", b"abc\x00def", "binary"),
        ("ctrl.md", bytes(range(1, 9)) * 100, "binary"),
        ("image.png", b"\x89PNG....", r"unsupported file type \(\.png\)"),
        ("noext", b"text", "unsupported file type"),
    ],
)
def test_refusals(name, data, pattern):
    with pytest.raises(DocumentError, match=pattern):
        read_upload(name, data)


def test_too_large_names_the_limit():
    with pytest.raises(DocumentError, match="limit is 1 MB"):
        read_upload("big.txt", b"a" * (1024 * 1024 + 1), max_bytes=1024 * 1024)
    assert MAX_UPLOAD_BYTES == 20 * 1024 * 1024


def test_read_path(tmp_path):
    p = tmp_path / "doc.txt"
    p.write_text("Some text.", encoding="utf-8")
    assert read_path(p) == "Some text."
    with pytest.raises(DocumentError, match="no such file"):
        read_path(tmp_path / "missing.txt")


def test_document_error_is_a_value_error():
    assert issubclass(DocumentError, ValueError)


def test_pdf_paragraphs_are_split_on_layout_gaps_without_reflowing_their_lines():
    """A PDF holds no blank lines: a vertical gap wider than the usual line spacing (here one empty line)
    ends a paragraph, so "by paragraph" gives paragraphs, not pages; each paragraph's lines stay as drawn."""
    from components.core.documents import paginate

    lines = ["First paragraph, line one,", "line two ends.", "", "Second paragraph", "and its end.", "Third."]
    text = read_upload("a.pdf", text_pdf(lines))
    assert text == "First paragraph, line one,\nline two ends.\n\nSecond paragraph\nand its end.\nThird."
    assert [p.text for p in paginate(text).pages] == [
        "First paragraph, line one,\nline two ends.",
        "Second paragraph\nand its end.\nThird.",
    ]


def test_pdf_lines_evenly_spaced_stay_one_paragraph():
    text = read_upload("a.pdf", text_pdf(["one line,", "two lines,", "three lines."]))
    assert text == "one line,\ntwo lines,\nthree lines."
