"""Documents: text split into pages (R&R §3.1: a page is any natural unit: paragraph, sentence...).

A page's tokens are counted once, here; every position later comes from prefix sums.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from typing import NamedTuple

from components.core.tokens import DEFAULT_ENCODING, tokenizer

PAGINATIONS = ("paragraph", "sentence", "tokens")

# Our structural tags. Text that contains one could close a page early or fake an instruction,
# so we replace the angle brackets with look-alike single guillemets: visible, and inert.
_TAG_RE = re.compile(
    r"<(\s*/?\s*(?:PAGE|DOCUMENT|INSTRUCTIONS_REMINDER|INSTRUCTIONS)\b[^<>]{0,40})>", re.IGNORECASE
)


def neutralise_tags(text: str) -> str:
    """`<PAGE 3>` -> `‹PAGE 3›` (and likewise DOCUMENT, INSTRUCTIONS, INSTRUCTIONS_REMINDER)."""
    if "<" not in text:  # no tag can be there: the text itself, without a regex call (every page of every trial)
        return text
    return _TAG_RE.sub(lambda m: f"\u2039{m.group(1)}\u203a", text)


class Page(NamedTuple):
    """One page. A NamedTuple, not a frozen dataclass: a sweep makes a document (about a hundred pages at
    1,000 tokens of short passages) per trial, and a tuple is made in under half the time."""

    number: int  # 1-based, as printed in <PAGE p>
    text: str
    tokens: int
    title: str = ""  # used by the "Lost in the Middle" prompt: Document [i](Title: ...)


@dataclass(frozen=True)
class Document:
    pages: tuple[Page, ...]
    gold: tuple[int, ...] = ()  # page numbers that hold the answer
    encoding: str = DEFAULT_ENCODING
    name: str = ""
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self):
        numbers = [p.number for p in self.pages]
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError("pages must be numbered 1..N in order")
        bad = [g for g in self.gold if not 1 <= g <= len(self.pages)]
        if bad:
            raise ValueError(f"gold page(s) {bad} outside 1..{len(self.pages)}")

    @cached_property
    def offsets(self) -> tuple[int, ...]:
        """offsets[i] = tokens before page i+1; offsets[-1] = total (len = pages + 1)."""
        return (0, *accumulate(p.tokens for p in self.pages))

    @property
    def tokens(self) -> int:
        return self.offsets[-1]

    def page(self, number: int) -> Page:
        return self.pages[number - 1]

    def with_gold(self, gold: tuple[int, ...] | list[int]) -> Document:
        return Document(self.pages, tuple(gold), self.encoding, self.name, self.meta)

    def subset(self, numbers: list[int]) -> list[Page]:
        """Pages by number, in document order, keeping their original numbers (ICR stage 2)."""
        wanted = sorted({n for n in numbers if 1 <= n <= len(self.pages)})
        return [self.pages[n - 1] for n in wanted]


def make_document(
    texts: list[str],
    *,
    titles: list[str] | None = None,
    gold: tuple[int, ...] | list[int] = (),
    encoding: str = DEFAULT_ENCODING,
    name: str = "",
    counts: list[int] | None = None,
) -> Document:
    """Pages from given texts (a task file's passages), kept exactly as given: no strip, no re-flow
    (LITM's reference keeps passages that end in a space or a newline). Only our own tags are made
    inert (neutralise_tags). Counts tokens once per page."""
    clean = [neutralise_tags(t) for t in texts]
    if counts is None:
        counts = tokenizer(encoding).count_many(clean) if clean else []
    titles = titles or [""] * len(clean)
    pages = tuple(
        Page(i + 1, text, n, neutralise_tags(title or ""))
        for i, (text, n, title) in enumerate(zip(clean, counts, titles, strict=True))
    )
    return Document(pages, tuple(gold), encoding, name)


_PARAGRAPH_BREAK = re.compile(r"\n[ \t\f\v]*\n\s*")


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each paragraph of text (line endings already \\n): blank lines separate
    paragraphs; a paragraph is the text between them without its outer white space."""
    out, start = [], 0
    for m in [*_PARAGRAPH_BREAK.finditer(text), None]:
        end = m.start() if m else len(text)
        part = text[start:end]
        if part.strip():
            lead = len(part) - len(part.lstrip())
            out.append((start + lead, start + len(part.rstrip())))
        start = m.end() if m else len(text)
    return out


def split_paragraphs(text: str) -> list[str]:
    """Paragraphs exactly as written (inner spaces and single line breaks kept); line endings become \\n."""
    text = _lines(text)
    return [text[a:b] for a, b in paragraph_spans(text)]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence (pysbd, one paragraph at a time: ten times faster than the whole
    text), without the white space between sentences."""
    import pysbd

    seg = pysbd.Segmenter(language="en", clean=False, char_span=True)
    out: list[tuple[int, int]] = []
    for a, b in paragraph_spans(text):
        for span in seg.segment(text[a:b]):
            s, e = a + span.start, a + span.end
            while s < e and text[s].isspace():
                s += 1
            while e > s and text[e - 1].isspace():
                e -= 1
            if e > s:
                out.append((s, e))
    return out


def split_sentences(text: str) -> list[str]:
    text = _lines(text)
    return [text[a:b] for a, b in sentence_spans(text)]


def split_token_budget(text: str, budget: int, encoding: str = DEFAULT_ENCODING) -> list[str]:
    """Pages of at most about `budget` tokens, each a slice of the text (never re-flowed): whole
    sentences packed in order, a paragraph kept together when its page is at least half full; a
    sentence longer than the budget is cut by tokens."""
    if budget < 1:
        raise ValueError("token budget per page must be a positive integer")
    text = _lines(text)
    tok = tokenizer(encoding)
    pages: list[str] = []
    start = end = None  # the open page, as a slice of text
    used = 0

    def close() -> None:
        nonlocal start, end, used
        if start is not None:
            pages.append(text[start:end])
        start = end = None
        used = 0

    for pa, pb in paragraph_spans(text):
        for a, b in _sentences_in(text, pa, pb):
            n = tok.count(text[a:b]) + 1
            if n > budget:
                close()
                ids = tok.encode(text[a:b])
                pieces = [tok.decode(ids[i: i + budget]) for i in range(0, len(ids), budget)]
                pages.extend(p for p in pieces if p.strip())
                continue
            if used + n > budget and start is not None:
                close()
            start = a if start is None else start
            end = b
            used += n
        if start is not None and used >= budget * 0.5:
            close()
    close()
    return [p for p in pages if p.strip()]


def _sentences_in(text: str, a: int, b: int) -> list[tuple[int, int]]:
    return [(a + s, a + e) for s, e in sentence_spans(text[a:b])]


def parse_pagination(spec: str) -> tuple[str, int | None]:
    """'paragraph' | 'sentence' | 'tokens:N' -> (mode, N)."""
    spec = (spec or "").strip().lower()
    if spec in ("paragraph", "sentence"):
        return spec, None
    if spec.startswith("tokens:"):
        raw = spec.split(":", 1)[1]
        if not raw.isdigit() or int(raw) < 1:
            raise ValueError(f"pagination 'tokens:N' needs a positive whole number, got {raw!r}")
        return "tokens", int(raw)
    raise ValueError(f"unknown pagination {spec!r}; use paragraph, sentence or tokens:N")


def paginate(text: str, spec: str = "paragraph", encoding: str = DEFAULT_ENCODING, name: str = "") -> Document:
    """Split text into a Document. Raises ValueError for empty text or a bad spec."""
    if not text or not text.strip():
        raise ValueError("the document is empty: paste or upload some text")
    mode, n = parse_pagination(spec)
    if mode == "paragraph":
        parts = split_paragraphs(text)
    elif mode == "sentence":
        parts = split_sentences(text)
    else:
        parts = split_token_budget(text, n or 0, encoding)
    return make_document(parts, encoding=encoding, name=name)


def find_pages(doc: Document, needle: str) -> list[int]:
    """Page numbers whose text contains `needle` (case-insensitive): a default gold for pasted text."""
    n = " ".join(needle.lower().split())
    if not n:
        return []
    return [p.number for p in doc.pages if n in " ".join(p.text.lower().split())]
