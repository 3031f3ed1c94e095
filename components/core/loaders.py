"""Text from uploaded or local files: .txt .md .pdf .docx .html/.htm.

Every failure is a DocumentError with one line the user can act on.

Every input file (a document, a task file, a sweep config, a price file, `litm score --input`) is read by
`read_bounded`: a regular file only (a FIFO, a device such as /dev/zero or a folder is refused at once
with one line, without waiting for a writer), its size checked before a byte is read and again while
reading (a file that grows stops at the limit).

Memory stays bounded whatever the file holds: the upload limit (20 MB) is on the bytes received; a
.docx is a zip, so its unpacked sizes are checked from the zip directory, and its XML parts are counted
by a streaming parse (unpacked bytes, elements, paragraphs, characters) before python-docx builds
anything; a PDF's pages are counted before any text is extracted; an HTML file's tags are counted
before it is parsed, and its text is read in one pass (the standard library's HTMLParser, no tree), in time
in proportion to its size however deep its tags nest.
"""

from __future__ import annotations

import io
import logging
import os
import stat
from html.parser import HTMLParser
from pathlib import Path

MAX_UPLOAD_BYTES = 20 * 1024 * 1024
EXTENSIONS = (".txt", ".md", ".pdf", ".docx", ".html", ".htm")
MAX_CHARS = 20_000_000  # characters of text in one document (about 5M tokens)
MAX_PARAGRAPHS = 100_000  # paragraphs of a .docx
MAX_DOCX_UNPACKED = 200 * 1024 * 1024  # bytes of all the parts of a .docx, unpacked
MAX_DOCX_PARTS = 5_000  # files inside a .docx zip
MAX_DOCX_XML = 50 * 1024 * 1024  # bytes of a .docx's XML parts, unpacked (python-docx holds them as trees)
MAX_DOCX_ELEMENTS = 1_000_000  # XML elements in a .docx's parts (a tree costs about 270 bytes an element)
MAX_PDF_PAGES = 2_000
MAX_HTML_TAGS = 200_000
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


class DocumentError(ValueError):
    """A file we cannot read as a document; the message is shown to the user as it is."""


class InputError(ValueError):
    """An input file that cannot be read as it is (not a regular file, too large); one line for the user."""


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.0f} MB"


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def open_bounded(
    path: str | os.PathLike, max_bytes: int, what: str = "the file", error: type[ValueError] = InputError
) -> io.BufferedReader:
    """A regular file of at most max_bytes, open for reading (binary), for a reader that streams it. Anything
    else (missing, a folder, a FIFO, a device, a socket, too large, unreadable) raises `error` with one line
    naming the file and `what` it is. The file is opened non-blocking, so a FIFO with no writer is refused at
    once instead of waited for. Its size is checked here; a reader that must not pass the limit while the
    file grows counts what it reads (read_bounded does)."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error(f"cannot read {p}: no such file") from None
    except OSError as exc:
        raise error(f"cannot read {p}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
            raise error(f"{p} is {kind}, not a file: give {what} as a regular file")
        if info.st_size > max_bytes:
            raise error(
                f"{p.name} is {info.st_size / 2**20:,.1f} MB; the limit is {_mb(max_bytes)} for {what}"
            )
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_bounded(
    path: str | os.PathLike, max_bytes: int, what: str = "the file", error: type[ValueError] = InputError
) -> bytes:
    """The bytes of a regular file of at most max_bytes (open_bounded: anything else raises `error` with one
    line); the read stops one byte past the limit, so a file that grows while it is read stops there too."""
    p = Path(path)
    with open_bounded(p, max_bytes, what, error) as f:
        chunks, n = [], 0
        try:
            while n <= max_bytes:
                chunk = f.read1(min(1 << 20, max_bytes + 1 - n))
                if not chunk:
                    break
                chunks.append(chunk)
                n += len(chunk)
        except OSError as exc:
            raise error(f"cannot read {p}: {exc.strerror or exc}") from None
    if n > max_bytes:
        raise error(f"{p.name} is larger than {_mb(max_bytes)}; the limit is {_mb(max_bytes)} for {what}")
    return b"".join(chunks)


def read_stream(
    stream, max_bytes: int, what: str = "the input", error: type[ValueError] = InputError
) -> bytes:
    """At most max_bytes from a binary stream (standard input); more raises `error` with one line."""
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise error(f"{what} is larger than {_mb(max_bytes)}, its limit")
    return data


def _looks_binary(data: bytes) -> bool:
    """NUL bytes, or mostly control characters in the first 8 KB."""
    head = data[:8192]
    if b"\x00" in head:
        return True
    controls = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13))
    return controls > len(head) * 0.1


def _decode(name: str, data: bytes) -> str:
    if _looks_binary(data):
        raise DocumentError(f"{name} looks like a binary file, not text")
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")  # never fails: every byte is a character


def _too_much(name: str, what: str, limit: int) -> DocumentError:
    return DocumentError(
        f"{name} has more than {limit:,} {what}, the limit for one document; split it "
        "or keep the part you need"
    )


def _check_docx(name: str, data: bytes) -> None:
    """Sizes from the zip directory, then every XML part (the main part first) streamed through expat,
    never held: paragraphs, characters of text, elements and unpacked bytes counted across the parts,
    before python-docx builds a tree of any of them. A zip bomb, a 2,000,000-paragraph file or 9,000
    empty paragraphs each carrying 20 KB of formatting (170 MB of XML, 2.5 GB as a tree) stop here."""
    import zipfile
    from xml.parsers import expat

    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise DocumentError(f"{name} is not a readable .docx file ({exc.__class__.__name__})") from None
    if len(infos) > MAX_DOCX_PARTS:
        raise _too_much(name, "parts inside its zip", MAX_DOCX_PARTS)
    unpacked = sum(i.file_size for i in infos)
    if unpacked > MAX_DOCX_UNPACKED:
        raise DocumentError(
            f"{name} unpacks to {unpacked / 2**20:,.0f} MB; the limit is {_mb(MAX_DOCX_UNPACKED)} "
            "(is it a zip bomb?)"
        )
    if "word/document.xml" not in zf.namelist():
        raise DocumentError(f"{name} is not a .docx file (no word/document.xml inside)")
    xml_parts = sorted(
        (i.filename for i in infos if i.filename.lower().endswith((".xml", ".rels"))),
        key=lambda part: part != "word/document.xml",
    )
    counts = {"p": 0, "chars": 0, "in_t": 0, "elements": 0, "bytes": 0}

    def start(tag, _attrs):
        counts["elements"] += 1
        if counts["elements"] > MAX_DOCX_ELEMENTS:
            raise _too_much(name, "XML elements (its formatting included)", MAX_DOCX_ELEMENTS)
        if tag == f"{_W}}}p":
            counts["p"] += 1
            if counts["p"] > MAX_PARAGRAPHS:
                raise _too_much(name, "paragraphs", MAX_PARAGRAPHS)
        elif tag == f"{_W}}}t":
            counts["in_t"] += 1

    def end(tag):
        if tag == f"{_W}}}t":
            counts["in_t"] -= 1

    def text(chunk):
        if counts["in_t"]:
            counts["chars"] += len(chunk)
            if counts["chars"] > MAX_CHARS:
                raise _too_much(name, "characters", MAX_CHARS)

    for part_name in xml_parts:
        parser = expat.ParserCreate(namespace_separator="}")
        parser.StartElementHandler, parser.EndElementHandler, parser.CharacterDataHandler = start, end, text
        counts["in_t"] = 0
        try:
            with zf.open(part_name) as part:
                while chunk := part.read(1 << 20):
                    counts["bytes"] += len(chunk)
                    if counts["bytes"] > MAX_DOCX_XML:
                        raise DocumentError(
                            f"{name}: its XML unpacks to more than {_mb(MAX_DOCX_XML)}, the limit "
                            "for a .docx (formatting included); save a copy with less formatting "
                            "or keep the part you need"
                        )
                    parser.Parse(chunk, False)
                parser.Parse(b"", True)
        except expat.ExpatError as exc:
            raise DocumentError(f"{name} is not a readable .docx file (broken XML: {exc})") from None
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
            raise DocumentError(f"{name} is not a readable .docx file ({exc.__class__.__name__})") from None


PARAGRAPH_GAP = 1.5  # a gap between two lines this many times the page's usual line spacing ends a paragraph


def _pdf_page(page) -> str:
    """A PDF page's text as pypdf extracts it, with a blank line where the layout leaves a vertical gap
    between two lines (more than PARAGRAPH_GAP times the page's median line spacing): a PDF has no blank
    lines, so without this each page would be one paragraph. Only line breaks are added; the text of the
    lines, and the single line breaks inside a paragraph, stay exactly as extracted (never re-flowed)."""
    chunks: list[tuple[str, float]] = []

    def seen(text, cm, tm, _font, _size) -> None:
        chunks.append((text, tm[4] * cm[1] + tm[5] * cm[3] + cm[5]))  # the chunk's y on the page

    text = page.extract_text(visitor_text=seen) or ""
    if "".join(t for t, _ in chunks) != text:  # the chunks are not the text: keep it as extracted
        return text
    starts = [i for i, (t, _) in enumerate(chunks) if t and (i == 0 or chunks[i - 1][0].endswith("\n"))]
    gaps = {i: chunks[j][1] - chunks[i][1] for j, i in zip(starts, starts[1:], strict=False)}
    down = sorted(g for g in gaps.values() if g > 0)
    if len(down) < 2:
        return text
    usual = down[len(down) // 2]
    breaks = {i for i, g in gaps.items() if g > PARAGRAPH_GAP * usual}
    return "".join(
        ("\n" if i in breaks and not t.startswith("\n") else "") + t for i, (t, _) in enumerate(chunks)
    )


def _pdf(name: str, data: bytes) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    log = logging.getLogger("pypdf")
    level = log.level
    log.setLevel(logging.CRITICAL)  # pypdf logs its repairs; our message says what matters
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentError(f"{name} is a password-protected PDF; remove the password and try again")
        if len(reader.pages) > MAX_PDF_PAGES:
            raise _too_much(name, "pages", MAX_PDF_PAGES)
        pages, chars = [], 0
        for page in reader.pages:
            pages.append(_pdf_page(page))
            chars += len(pages[-1])
            if chars > MAX_CHARS:
                raise _too_much(name, "characters", MAX_CHARS)
    except DocumentError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError, IndexError) as exc:
        raise DocumentError(
            f"{name} is not a readable PDF ({exc.__class__.__name__}); is it complete?"
        ) from None
    finally:
        log.setLevel(level)
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text.strip():
        raise DocumentError(f"{name} has no extractable text (a scanned PDF?); run OCR on it first")
    return text


def _docx(name: str, data: bytes) -> str:
    import zipfile

    from docx import Document as DocxDocument

    _check_docx(name, data)
    try:
        doc = DocxDocument(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise DocumentError(f"{name} is not a readable .docx file ({exc.__class__.__name__})") from None
    paras = [p.text.strip() for p in doc.paragraphs]
    for table in doc.tables:
        for row in table.rows:
            paras.append(" | ".join(cell.text.strip() for cell in row.cells))
    return "\n\n".join(p for p in paras if p)


_BLOCKS = (
    "p",
    "div",
    "section",
    "article",
    "header",
    "footer",
    "li",
    "tr",
    "table",
    "ul",
    "ol",
    "pre",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "br",
    "hr",
    "main",
    "aside",
    "nav",
    "dd",
    "dt",
)


_SKIPPED = frozenset(("script", "style", "noscript", "template", "head"))
_VOID = frozenset(
    "area base br col embed hr img input link meta param source track wbr basefont bgsound frame keygen".split()
)


class _HtmlText(HTMLParser):
    """The text of an HTML page in one pass, in time linear in its size at any nesting depth: a blank line
    around every block tag, nothing from inside script, style, noscript, template or head. Open tags are
    kept on a stack, and an end tag closes every tag opened after its own (as Beautiful Soup does); an end
    tag with nothing open of its name is ignored (a count per name answers that at once)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[str] = []
        self.stack: list[str] = []
        self.open: dict[str, int] = {}
        self.skipping = 0

    def handle_starttag(self, tag, attrs):
        if tag in _VOID:
            if tag in _BLOCKS and not self.skipping:
                self.pieces.append("\n\n\n\n")
            return
        if tag in _BLOCKS and not self.skipping:
            self.pieces.append("\n\n")
        self.skipping += tag in _SKIPPED
        self.stack.append(tag)
        self.open[tag] = self.open.get(tag, 0) + 1

    def handle_endtag(self, tag):
        if tag in _VOID and tag in _BLOCKS and not self.skipping:
            self.pieces.append("\n\n\n\n")  # a stray </br> or </hr>
        if not self.open.get(tag):
            return
        while self.stack:
            top = self.stack.pop()
            self.open[top] -= 1
            self.skipping -= top in _SKIPPED
            if top in _BLOCKS and not self.skipping:
                self.pieces.append("\n\n")
            if top == tag:
                return

    def handle_data(self, data):
        if not self.skipping:
            self.pieces.append(data)


def _html(name: str, data: bytes) -> str:
    if data.count(b"<") > MAX_HTML_TAGS:
        raise _too_much(name, "HTML tags", MAX_HTML_TAGS)
    parser = _HtmlText()
    parser.feed(_decode(name, data))
    parser.close()
    text = "".join(parser.pieces)
    paras = [" ".join(p.split()) for p in text.split("\n\n")]
    return "\n\n".join(p for p in paras if p)


def read_upload(name: str, data: bytes, max_bytes: int = MAX_UPLOAD_BYTES) -> str:
    """The text of an uploaded file, by its extension. Raises DocumentError."""
    name = Path(name or "upload").name
    ext = Path(name).suffix.lower()
    if ext not in EXTENSIONS:
        shown = ext or "no extension"
        raise DocumentError(f"{name}: unsupported file type ({shown}); use {', '.join(EXTENSIONS)}")
    if len(data) > max_bytes:
        raise DocumentError(f"{name} is {len(data) / (1024 * 1024):.1f} MB; the limit is {_mb(max_bytes)}")
    if not data.strip():
        raise DocumentError(f"{name} is empty")
    if ext == ".pdf":
        text = _pdf(name, data)
    elif ext == ".docx":
        text = _docx(name, data)
    elif ext in (".html", ".htm"):
        text = _html(name, data)
    else:
        text = _decode(name, data)
    if not text.strip():
        raise DocumentError(f"{name} contains no text")
    if len(text) > MAX_CHARS:
        raise _too_much(name, "characters", MAX_CHARS)
    return text


def read_path(path: str | Path) -> str:
    """The text of a local file. Raises DocumentError (also for a missing file, a FIFO or a device)."""
    p = Path(path)
    return read_upload(p.name, read_bounded(p, MAX_UPLOAD_BYTES, "a document", DocumentError))
