"""Text from uploaded or local files: .txt .md .pdf .docx .html/.htm.

Every failure is a DocumentError with one line the user can act on.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path

MAX_UPLOAD_BYTES = 20 * 1024 * 1024
EXTENSIONS = (".txt", ".md", ".pdf", ".docx", ".html", ".htm")


class DocumentError(ValueError):
    """A file we cannot read as a document; the message is shown to the user as it is."""


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.0f} MB"


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
        pages = [page.extract_text() or "" for page in reader.pages]
    except DocumentError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError, IndexError) as exc:
        raise DocumentError(f"{name} is not a readable PDF ({exc.__class__.__name__}); is it complete?") from None
    finally:
        log.setLevel(level)
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text.strip():
        raise DocumentError(f"{name} has no extractable text (a scanned PDF?); run OCR on it first")
    return text


def _docx(name: str, data: bytes) -> str:
    import zipfile

    from docx import Document as DocxDocument

    try:
        doc = DocxDocument(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise DocumentError(f"{name} is not a readable .docx file ({exc.__class__.__name__})") from None
    paras = [p.text.strip() for p in doc.paragraphs]
    for table in doc.tables:
        for row in table.rows:
            paras.append(" | ".join(cell.text.strip() for cell in row.cells))
    return "\n\n".join(p for p in paras if p)


_BLOCKS = ("p", "div", "section", "article", "header", "footer", "li", "tr", "table", "ul", "ol", "pre",
           "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "br", "hr", "main", "aside", "nav", "dd", "dt")


def _html(name: str, data: bytes) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(_decode(name, data), "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "head"]):
        tag.decompose()
    for tag in soup.find_all(_BLOCKS):
        tag.insert_before("\n\n")
        tag.insert_after("\n\n")
    text = soup.get_text()
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
    return text


def read_path(path: str | Path) -> str:
    """The text of a local file. Raises DocumentError (also for a missing file)."""
    p = Path(path)
    if not p.is_file():
        raise DocumentError(f"{p}: no such file")
    size = p.stat().st_size
    if size > MAX_UPLOAD_BYTES:
        raise DocumentError(f"{p.name} is {size / (1024 * 1024):.1f} MB; the limit is {_mb(MAX_UPLOAD_BYTES)}")
    return read_upload(p.name, p.read_bytes())
