"""Prompts and spans: the exact text sent, and what each region of it is.

A prompt is assembled from pieces whose token counts are known (a page's count was taken once when
the document was made; template pieces are short and remembered), so token offsets are prefix sums
and no prompt is re-tokenised. Where two pieces meet, the tokeniser may merge across the seam (a
page ending in "." followed by "\n</PAGE 3>" gives the one token ".\n"); each seam is corrected by
tokenising only its two edge pre-tokens (remembered), which keeps the total within a few tokens of
encoding the whole prompt (bench/bench_prompts.py reports the gap).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import regex

from components.core.documents import PAGE_TAGS, Page
from components.core.resources import package_path
from components.core.tokens import DEFAULT_ENCODING, Tokenizer, pattern, tokenizer

SPAN_KINDS = ("instruction", "reminder", "page", "gold", "chunk", "question")
TEMPLATE_DIR = package_path("strategies", "templates")


class Span(NamedTuple):
    """A region of a prompt. A NamedTuple, not a frozen dataclass: a prompt of a 1,000-token document has
    about a hundred of them, made per trial, and a tuple is made in a third of the time."""

    kind: str
    start_char: int
    end_char: int
    start_token: int
    end_token: int
    page: int | None = None
    chunk: int | None = None

    def to_dict(self) -> dict:
        return self._asdict()


@dataclass(frozen=True)
class Prompt:
    stage: int
    text: str
    tokens: int
    spans: tuple[Span, ...] = ()
    label: str = ""  # e.g. "retrieve (chunk 2 of 5)"
    max_tokens: int = 256  # output budget the strategy expects
    # earlier turns of the conversation this prompt continues, as (role, content) pairs: a later stage
    # that keeps the first stage's exchange (ALR2 Fig. 3). `text`, `tokens` and `spans` are this turn's.
    history: tuple[tuple[str, str], ...] = ()

    @property
    def messages(self) -> list[dict]:
        return [*({"role": r, "content": c} for r, c in self.history), {"role": "user", "content": self.text}]

    def cache_cuts(self) -> tuple[int, ...]:
        """Where a provider's prompt cache may cut this prompt: the start of each page before the shared
        prefix ends, and, last, where it ends: the first region that differs between trials of one
        question (its gold page, or the question). The text before the gold page is the instruction and
        the distractors in their given order, the same for every position further on. () when the prompt
        has neither (nothing marked), or continues a conversation (the cuts would fall in its last turn)."""
        ends = [s.start_char for s in self.spans if s.kind in ("gold", "question")]
        if self.history or not ends or min(ends) <= 0:
            return ()
        end = min(ends)
        pages = sorted({s.start_char for s in self.spans if s.kind == "page" and 0 < s.start_char < end})
        return (*pages, end)

    def spans_of(self, kind: str) -> list[Span]:
        return [s for s in self.spans if s.kind == kind]

    def to_dict(self) -> dict:
        return {
            "stage": self.stage,
            "label": self.label,
            "text": self.text,
            "tokens": self.tokens,
            "spans": [s.to_dict() for s in self.spans],
            **({"history": [{"role": r, "content": c} for r, c in self.history]} if self.history else {}),
        }


@lru_cache(maxsize=256)
def load_template(name: str) -> str:
    """Read strategies/templates/<name>.txt exactly (no trailing newline added or removed); once."""
    path = TEMPLATE_DIR / f"{name}.txt"
    text = path.read_text(encoding="utf-8")
    return text[:-1] if text.endswith("\n") else text


_EDGE = 32  # characters looked at on each side of a seam


class Seams:
    """Token corrections where two pieces of text meet, from the encoding's own pre-tokeniser."""

    def __init__(self, encoding: str):
        tok = tokenizer(encoding)
        self.count = tok.count
        self.pattern = regex.compile(pattern(encoding))
        self._delta: dict[tuple[str, str], int] = {}
        self._edges: dict[str, tuple[str, str]] = {}
        self._around: dict[tuple[str, str, str], int] = {}
        self.pages: dict[tuple, tuple[str, int, tuple[str, str]]] = {}  # PromptBuilder.add_page's

    def edges(self, text: str) -> tuple[str, str]:
        """(first, last) pre-token of text; remembered, since the same pages and template pieces
        recur across a grid of prompts."""
        e = self._edges.get(text)
        if e is None:
            m = self.pattern.match(text, 0, min(len(text), _EDGE))
            found = self.pattern.findall(text, max(0, len(text) - _EDGE))
            e = (m.group() if m else text[:1], found[-1] if found else text[-1:])
            if len(self._edges) < 200_000:
                self._edges[text] = e
        return e

    def around(self, left: str, text: str, right: str) -> int:
        """The merges at both seams of `text` (not empty) between pieces ending in the pre-token `left`
        and starting with `right`: delta(left, first) + delta(last, right). Remembered per
        (left, text, right): a page's tags are the same pieces on every page, and a sweep's pool
        passages come back trial after trial (core.tagged counts each page this way)."""
        key = (left, text, right)
        d = self._around.get(key)
        if d is None:
            first, last = self.edges(text)
            d = self.delta(left, first) + self.delta(last, right)
            if len(self._around) < 200_000:
                self._around[key] = d
        return d

    def delta(self, left: str, right: str) -> int:
        """Tokens of left+right minus tokens of each (0 or negative): the merge at the seam."""
        key = (left, right)
        d = self._delta.get(key)
        if d is None:
            d = self.count(left + right) - self.count(left) - self.count(right)
            if len(self._delta) < 200_000:
                self._delta[key] = d
        return d


@lru_cache(maxsize=4)
def seams(encoding: str) -> Seams:
    return Seams(encoding)


@dataclass
class PromptBuilder:
    """Appends pieces; records spans with character and token offsets."""

    encoding: str = DEFAULT_ENCODING
    parts: list[str] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    chars: int = 0
    toks: int = 0
    tail: str = ""  # the last pre-token so far, for the seam with the next piece
    _tok: Tokenizer = field(init=False, repr=False, compare=False)  # both set by __post_init__
    _sm: Seams = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._tok, self._sm = tokenizer(self.encoding), seams(self.encoding)  # looked up once, used per piece

    def add(
        self,
        text: str,
        kind: str | None = None,
        *,
        page: int | None = None,
        chunk: int | None = None,
        tokens: int | None = None,
        edges: tuple[str, str] | None = None,
    ) -> PromptBuilder:
        """Append text; `tokens` is its own count when known (a page's), else it is counted here;
        `edges` its first and last pre-tokens when known."""
        if not text:
            return self
        n = tokens if tokens is not None else self._tok.count(text)
        sm = self._sm
        first, last = edges or sm.edges(text)
        if self.tail:
            n += sm.delta(self.tail, first)
        self.tail = sm.edges(self.tail + text)[1] if len(text) < _EDGE else last
        if kind is not None:
            if kind not in SPAN_KINDS:
                raise ValueError(f"unknown span kind {kind!r}")
            self.spans.append(
                Span(kind, self.chars, self.chars + len(text), self.toks, self.toks + n, page, chunk)
            )
        self.parts.append(text)
        self.chars += len(text)
        self.toks += n
        return self

    def add_page(self, page: Page, gold: bool, wrapper: str = PAGE_TAGS) -> PromptBuilder:
        """One page, counted as its stored token count plus the (remembered) wrapper pieces. The wrapped
        text, its count and edges are remembered per page and wrapper: a sweep builds the same pages
        into thousands of prompts."""
        sm = self._sm
        key = (wrapper, page.number, page.title, page.text, page.tokens)
        got = sm.pages.get(key)
        if got is None:
            head, tail = wrapper.split("{text}")
            head, tail = (
                head.format(p=page.number, title=page.title),
                tail.format(p=page.number, title=page.title),
            )
            got = (
                head + page.text + tail,
                self.joined_count(head, page, tail),
                self.joined_edges(head, page, tail),
            )
            if len(sm.pages) < 200_000:
                sm.pages[key] = got
        text, tokens, edges = got
        return self.add(text, "gold" if gold else "page", page=page.number, tokens=tokens, edges=edges)

    def joined_count(self, head: str, page: Page, tail: str = "") -> int:
        """Tokens of head + page text + tail: the page's stored count, the wrappers', their seams."""
        tok, sm = self._tok, self._sm
        n = page.tokens
        first, last = sm.edges(page.text) if page.text else ("", "")
        if head:
            n += tok.count(head) + (sm.delta(sm.edges(head)[1], first) if page.text else 0)
        if tail:
            n += tok.count(tail) + (sm.delta(last, sm.edges(tail)[0]) if page.text else 0)
        return n

    def joined_edges(self, head: str, page: Page, tail: str = "") -> tuple[str, str]:
        """First and last pre-tokens of head + page text + tail (the wrappers are never empty in
        practice; a pre-token never crosses them, they start and end with a tag or a newline)."""
        sm = self._sm
        first = sm.edges(head)[0] if head else sm.edges(page.text)[0]
        last = sm.edges(tail)[1] if tail else sm.edges(page.text)[1]
        return first, last

    def mark(
        self,
        kind: str,
        start_char: int,
        start_token: int,
        *,
        page: int | None = None,
        chunk: int | None = None,
    ) -> None:
        """A span over everything added since (start_char, start_token), e.g. a whole chunk."""
        self.spans.append(Span(kind, start_char, self.chars, start_token, self.toks, page, chunk))

    def build(
        self,
        stage: int = 1,
        label: str = "",
        max_tokens: int = 256,
        history: tuple[tuple[str, str], ...] = (),
    ) -> Prompt:
        spans = tuple(sorted(self.spans, key=lambda s: (s.start_char, -s.end_char)))
        return Prompt(stage, "".join(self.parts), self.toks, spans, label, max_tokens, tuple(history))
