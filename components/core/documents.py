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
# how R&R's prompt writes a page (R&R §4.1: "each passage is enclosed in <PAGE {p}> ... </PAGE {p}> tags"),
# and what comes between two pages ("a double-linebreak-separated list of the provided passages"); the
# prompt builder (prompts.PromptBuilder.add_page, strategies.base.add_pages) and R&R's document length
# (core.tagged) both read these
PAGE_TAGS = "<PAGE {p}>\n{text}\n</PAGE {p}>"
PAGE_SEP = "\n\n"

# Our structural tags. Text that contains one could close a page early or fake an instruction,
# so we replace the angle brackets with look-alike single guillemets: visible, and inert.
_TAG_RE = re.compile(
    r"<(\s*/?\s*(?:PAGE|DOCUMENT|INSTRUCTIONS_REMINDER|INSTRUCTIONS)\b[^<>]{0,40})>", re.IGNORECASE
)


def neutralise_tags(text: str) -> str:
    """`<PAGE 3>` -> `‹PAGE 3›` (and likewise DOCUMENT, INSTRUCTIONS, INSTRUCTIONS_REMINDER)."""
    if (
        "<" not in text
    ):  # no tag can be there: the text itself, without a regex call (every page of every trial)
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

MAX_PAGES = 20_000  # pages of one paginated document
SENTENCE_WINDOW = 3_000  # characters handed to the sentence splitter at once (its cost grows with the square)


class TooManyPages(ValueError):
    """A pagination that would make more than MAX_PAGES pages; the message is one line for the user."""


def _too_many(limit: int) -> TooManyPages:
    return TooManyPages(
        f"the document makes more than {limit:,} pages, the limit; choose longer pages "
        "(paragraph, or a larger tokens:N) or keep the part you need"
    )


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _iter_paragraphs(text: str):
    """(start, end) of each paragraph, one at a time (see paragraph_spans)."""
    start = 0
    for m in _breaks(text):
        end = m.start() if m else len(text)
        part = text[start:end]
        if part.strip():
            lead = len(part) - len(part.lstrip())
            yield start + lead, start + len(part.rstrip())
        start = m.end() if m else len(text)


def _breaks(text: str):
    yield from _PARAGRAPH_BREAK.finditer(text)
    yield None


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each paragraph of text (line endings already \\n): blank lines separate
    paragraphs; a paragraph is the text between them without its outer white space."""
    return list(_iter_paragraphs(text))


def split_paragraphs(text: str) -> list[str]:
    """Paragraphs exactly as written (inner spaces and single line breaks kept); line endings become \\n."""
    text = _lines(text)
    return [text[a:b] for a, b in paragraph_spans(text)]


def _trimmed(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


def _iter_sentences(text: str, a: int, b: int, seg, window: int = SENTENCE_WINDOW):
    """(start, end) of each sentence of text[a:b] (one paragraph), in linear time: pysbd's cost grows with
    the square of what it is given, so it sees at most `window` characters at once. Of a window that
    does not reach the paragraph's end, every sentence but the last is kept and the next window starts
    at that last one (which the cut may have split). A window holding no sentence end (a run-on sentence
    longer than the window) is cut at its last space: pages stay slices of the text, never re-flowed."""
    s = a
    while s < b:
        e = min(b, s + window)
        spans = [_trimmed(text, s + x, s + y) for x, y in _pysbd_spans(seg, text[s:e])]
        spans = [(x, y) for x, y in spans if y > x]
        if e == b:
            yield from spans
            return
        if len(spans) > 1 and spans[-1][0] > s:  # progress is certain: the next window starts further on
            yield from spans[:-1]
            s = spans[-1][0]
            continue
        space = max(text.rfind(c, s + 1, e) for c in " \t\n\f\v")
        cut = space if space > s else e
        x, y = _trimmed(text, s, cut)
        if y > x:
            yield x, y
        s = cut


def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def _pysbd_spans(seg, text: str) -> list[tuple[int, int]]:
    """What `seg.segment(text)` gives as (start, end), found with str.find: pysbd compiles a regex per
    sentence to find it in the text, and that was two thirds of its time. The same rule: the first
    occurrence (scanning as re.finditer does) of the sentence plus the white space after it that ends
    past the previous sentence's end."""
    if not text:
        return []
    spans: list[tuple[int, int]] = []
    prior = 0
    for sent in seg.processor(text).process():
        if not sent:
            continue
        pos = 0
        while (i := text.find(sent, pos)) >= 0:
            end = i + len(sent)
            while end < len(text) and text[end].isspace():
                end += 1
            if end > prior:
                spans.append((i, end))
                prior = end
                break
            pos = end
    return spans


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence (pysbd, one paragraph at a time: ten times faster than the whole
    text; a long paragraph a window at a time), without the white space between sentences."""
    seg = _segmenter()
    return [span for a, b in _iter_paragraphs(text) for span in _iter_sentences(text, a, b, seg)]


def split_sentences(text: str) -> list[str]:
    text = _lines(text)
    return [text[a:b] for a, b in sentence_spans(text)]


def _bounded(spans, limit: int) -> list:
    out = []
    for span in spans:
        out.append(span)
        if len(out) > limit:
            raise _too_many(limit)
    return out


def split_token_budget(
    text: str, budget: int, encoding: str = DEFAULT_ENCODING, max_pages: int | None = None
) -> list[str]:
    """Pages of at most about `budget` tokens, each a slice of the text (never re-flowed): whole
    sentences packed in order, a paragraph kept together when its page is at least half full; a
    sentence longer than the budget is cut by tokens. More than max_pages pages raise TooManyPages
    as soon as they are made (the work stops there)."""
    if budget < 1:
        raise ValueError("token budget per page must be a positive integer")
    text = _lines(text)
    tok = tokenizer(encoding)
    seg = _segmenter()
    limit = MAX_PAGES if max_pages is None else max_pages
    pages: list[str] = []
    start = end = None  # the open page, as a slice of text
    used = 0

    def add(page: str) -> None:
        if page.strip():
            pages.append(page)
            if len(pages) > limit:
                raise _too_many(limit)

    def close() -> None:
        nonlocal start, end, used
        if start is not None:
            add(text[start:end])
        start = end = None
        used = 0

    for pa, pb in _iter_paragraphs(text):
        for a, b in _iter_sentences(text, pa, pb, seg):
            n = tok.count(text[a:b]) + 1
            if n > budget:
                close()
                ids = tok.encode(text[a:b])
                for i in range(0, len(ids), budget):
                    add(tok.decode(ids[i : i + budget]))
                continue
            if used + n > budget and start is not None:
                close()
            start = a if start is None else start
            end = b
            used += n
        if start is not None and used >= budget * 0.5:
            close()
    close()
    return pages


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


def paginate(
    text: str,
    spec: str = "paragraph",
    encoding: str = DEFAULT_ENCODING,
    name: str = "",
    max_pages: int | None = None,
) -> Document:
    """Split text into a Document, in time linear in the text. Raises ValueError for empty text or a bad
    spec, TooManyPages (a ValueError) past max_pages (default MAX_PAGES) pages, as soon as they are made."""
    if not text or not text.strip():
        raise ValueError("the document is empty: paste or upload some text")
    mode, n = parse_pagination(spec)
    limit = MAX_PAGES if max_pages is None else max_pages
    text = _lines(text)
    if mode == "paragraph":
        parts = [text[a:b] for a, b in _bounded(_iter_paragraphs(text), limit)]
    elif mode == "sentence":
        seg = _segmenter()
        spans = (span for a, b in _iter_paragraphs(text) for span in _iter_sentences(text, a, b, seg))
        parts = [text[a:b] for a, b in _bounded(spans, limit)]
    else:
        parts = split_token_budget(text, n or 0, encoding, limit)
    return make_document(parts, encoding=encoding, name=name)


def find_pages(doc: Document, needle: str) -> list[int]:
    """Page numbers whose text contains `needle` (case-insensitive): a default gold for pasted text."""
    n = " ".join(needle.lower().split())
    if not n:
        return []
    return [p.number for p in doc.pages if n in " ".join(p.text.lower().split())]
