"""Prompts and spans: the exact text sent, and what each region of it is.

A prompt is assembled from pieces whose token counts are known (a page's count was taken once when
the document was made; template pieces are short and remembered), so token offsets are prefix sums
and no prompt is re-tokenised. The sum can differ from encoding the whole string by a token at a
piece boundary where BPE would merge across it; pieces are separated by newlines, where it rarely does.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from components.documents import Page
from components.tokens import DEFAULT_ENCODING, tokenizer

SPAN_KINDS = ("instruction", "reminder", "page", "gold", "chunk", "question")
TEMPLATE_DIR = Path(__file__).parent / "strategies" / "templates"


@dataclass(frozen=True)
class Span:
    kind: str
    start_char: int
    end_char: int
    start_token: int
    end_token: int
    page: int | None = None
    chunk: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Prompt:
    stage: int
    text: str
    tokens: int
    spans: tuple[Span, ...] = ()
    label: str = ""  # e.g. "retrieve (chunk 2 of 5)"
    max_tokens: int = 256  # output budget the strategy expects

    @property
    def messages(self) -> list[dict]:
        return [{"role": "user", "content": self.text}]

    def spans_of(self, kind: str) -> list[Span]:
        return [s for s in self.spans if s.kind == kind]

    def to_dict(self) -> dict:
        return {
            "stage": self.stage,
            "label": self.label,
            "text": self.text,
            "tokens": self.tokens,
            "spans": [s.to_dict() for s in self.spans],
        }


def load_template(name: str) -> str:
    """Read strategies/templates/<name>.txt exactly (no trailing newline added or removed)."""
    path = TEMPLATE_DIR / f"{name}.txt"
    text = path.read_text(encoding="utf-8")
    return text[:-1] if text.endswith("\n") else text


@dataclass
class PromptBuilder:
    """Appends pieces; records spans with character and token offsets."""

    encoding: str = DEFAULT_ENCODING
    parts: list[str] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    chars: int = 0
    toks: int = 0

    def add(self, text: str, kind: str | None = None, *, page: int | None = None,
            chunk: int | None = None, tokens: int | None = None) -> PromptBuilder:
        if not text:
            return self
        n = tokens if tokens is not None else tokenizer(self.encoding).count(text)
        if kind is not None:
            if kind not in SPAN_KINDS:
                raise ValueError(f"unknown span kind {kind!r}")
            self.spans.append(Span(kind, self.chars, self.chars + len(text), self.toks, self.toks + n, page, chunk))
        self.parts.append(text)
        self.chars += len(text)
        self.toks += n
        return self

    def add_page(self, page: Page, gold: bool, wrapper: str = "<PAGE {p}>\n{text}\n</PAGE {p}>") -> PromptBuilder:
        """One page, counted as its stored token count plus the (remembered) wrapper pieces."""
        head, tail = wrapper.split("{text}")
        head, tail = head.format(p=page.number, title=page.title), tail.format(p=page.number, title=page.title)
        tok = tokenizer(self.encoding)
        n = tok.count(head) + page.tokens + tok.count(tail)
        return self.add(head + page.text + tail, "gold" if gold else "page", page=page.number, tokens=n)

    def mark(self, kind: str, start_char: int, start_token: int, *, page: int | None = None,
             chunk: int | None = None) -> None:
        """A span over everything added since (start_char, start_token), e.g. a whole chunk."""
        self.spans.append(Span(kind, start_char, self.chars, start_token, self.toks, page, chunk))

    def build(self, stage: int = 1, label: str = "", max_tokens: int = 256) -> Prompt:
        spans = tuple(sorted(self.spans, key=lambda s: (s.start_char, -s.end_char)))
        return Prompt(stage, "".join(self.parts), self.toks, spans, label, max_tokens)
