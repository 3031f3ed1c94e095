"""The strategy protocol: (document, question, parameters) -> stages of prompts -> an Outcome.

A strategy offers two things:
- `first_prompts(doc, question, params)`: every prompt that can be built before any model answers
  (stage 1), for the prompt map, the CLI and cost estimates;
- `run(doc, question, params, ask)`: the whole thing, asking for completions through `ask`
  (supplied by the runner, which caches, limits and retries). Later stages depend on earlier answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from components.core.completion import Ask, Completion
from components.core.documents import PAGE_SEP, Document, Page
from components.core.parsing import Parsed, parse_answer
from components.core.prompts import Prompt, PromptBuilder, load_template


class ParamError(ValueError):
    """A parameter a strategy cannot use; the message is shown to the user as it is."""


@dataclass(frozen=True)
class Param:
    """A strategy parameter: the one definition of its bounds, default and help, which the strategy's
    checks, sweep configs, the command line and the app's widgets all use."""

    name: str
    default: int
    help: str
    unit: str = "tokens"
    minimum: int = 1
    maximum: int | None = None  # e.g. 1 for a 0/1 switch
    step: int = 1  # a widget's step
    label: str = ""  # a widget's label where 'name (unit)' does not read: 'chunk size (tokens)'

    @property
    def title(self) -> str:
        """The label a widget shows: 'c (tokens)', 'k (pages)', 'chunk size (tokens)'."""
        return self.label or f"{self.name} ({self.unit})"

    def check(self, value) -> int:
        """The value as a whole number within bounds; ParamError with a plain message otherwise."""
        ok = (
            not isinstance(value, bool)
            and isinstance(value, int | float)
            and value == value
            and value == int(value)
        )
        if not ok or value < self.minimum or (self.maximum is not None and value > self.maximum):
            raise ParamError(f"{self.name} must be {self.bounds}, got {value!r}")
        return int(value)

    @property
    def bounds(self) -> str:
        if self.maximum == self.minimum + 1:
            return f"{self.minimum} or {self.maximum}"
        if self.minimum == 1 and self.maximum is None:
            return "a positive whole number"
        return f"a whole number from {self.minimum:,}" + (
            f" to {self.maximum:,}" if self.maximum is not None else ""
        )


@dataclass
class Outcome:
    """What a strategy produced for one question: the final answer and everything that led to it."""

    answer: str
    parsed: Parsed
    prompts: list[Prompt]
    completions: list[Completion]
    retrieved_pages: tuple[int, ...] | None = None  # pages a retrieval stage returned
    cited_pages: tuple[int, ...] = ()  # pages the answer said it came from
    sentences: tuple[str, ...] = ()  # retrieved sentences or quotes (ALR2)
    stage_errors: list[str] = field(default_factory=list)  # parse failures of earlier stages

    @property
    def calls(self) -> int:
        return len(self.completions)

    @property
    def input_tokens(self) -> int:
        return sum(c.input_tokens for c in self.completions)

    @property
    def output_tokens(self) -> int:
        return sum(c.output_tokens for c in self.completions)

    @property
    def latency_s(self) -> float:
        return sum(c.latency_s for c in self.completions)


def render(template: str, **values: Any) -> str:
    """Fill {name} placeholders by plain replacement: braces inside a question stay as they are."""
    out = template
    for key, value in values.items():
        out = out.replace("{" + key + "}", str(value))
    return out


def fmt(name: str) -> str:
    return load_template(f"format_{name}")


def check_question(question: str) -> str:
    """The question goes into the prompt exactly as given (task files are faithful; the app and the CLI
    trim what a user types)."""
    if not isinstance(question, str) or not question.strip():
        raise ParamError("the question is empty")
    return question


class Strategy:
    """Base class. Subclasses set name/label/paper/params and implement first_prompts and run."""

    name: str = ""
    label: str = ""
    paper: str = ""  # where it comes from, e.g. "R&R §3.2"
    summary: str = ""  # one line: what it does, for the app and the CLI
    params: tuple[Param, ...] = ()
    stages: int = 1
    metric: str = "fuzzy"  # the metric its paper reports
    # its paper scores a benchmark's tasks with the benchmark's own metric where the task names one
    # (ALR2 §4 on RULER's NIAH tasks: core.metrics.KIND_METRICS)
    follows_task_metric: bool = False
    needs_gold: bool = False  # e.g. reprompt-before-gold, oracle

    def metric_for(self, task_metric: str | None = None) -> str:
        """The primary metric of a trial of this strategy on a task whose benchmark scores it with
        `task_metric` (None: the task names none)."""
        return task_metric if self.follows_task_metric and task_metric else self.metric

    def defaults(self) -> dict:
        return {p.name: p.default for p in self.params}

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def check(self, doc: Document, question: str, params: dict | None) -> dict:
        """Validated parameters with defaults filled in; raises ParamError with a plain message."""
        if not doc.pages:
            raise ParamError("the document has no pages")
        check_question(question)
        merged = self.defaults()
        unknown = set(params or {}) - set(merged)
        if unknown:
            raise ParamError(
                f"{self.name} takes no parameter {', '.join(sorted(unknown))}"
                + (f" (it takes {', '.join(merged)})" if merged else "")
            )
        merged.update(params or {})
        for p in self.params:
            merged[p.name] = p.check(merged[p.name])
        if self.needs_gold and not doc.gold:
            raise ParamError(f"{self.label or self.name} needs the gold page(s) to be marked")
        return merged

    def first_prompts(self, doc: Document, question: str, params: dict | None = None) -> list[Prompt]:
        raise NotImplementedError

    async def run(self, doc: Document, question: str, params: dict | None, ask: Ask) -> Outcome:
        """Default: one stage, the answer parsed from the single response."""
        prompts = self.first_prompts(doc, question, params)
        completions = [await ask(p) for p in prompts]
        return answer_outcome(self.parse(completions[-1].text, doc), prompts, completions)

    def parse(self, text: str, doc: Document) -> Parsed:
        return parse_answer(text, len(doc.pages))


class OneCall(Strategy):
    """A strategy of one call: one prompt (`prompt`, from the checked parameters), one answer, parsed
    (`parse`); the outcome keeps the answer, the pages it cites and the sentences or quotes it wrote."""

    def prompt(self, doc: Document, question: str, params: dict) -> Prompt:
        raise NotImplementedError

    def first_prompts(self, doc: Document, question: str, params: dict | None = None) -> list[Prompt]:
        return [self.prompt(doc, question, self.check(doc, question, params))]

    async def run(self, doc: Document, question: str, params: dict | None, ask: Ask) -> Outcome:
        prompts = self.first_prompts(doc, question, params)
        done = await ask(prompts[0])
        parsed = self.parse(done.text, doc)
        return answer_outcome(parsed, prompts, [done], sentences=parsed.sentences)


def answer_outcome(parsed: Parsed, prompts: list[Prompt], completions: list[Completion], **kw) -> Outcome:
    return Outcome(
        parsed.answer if parsed.ok else "", parsed, prompts, completions, cited_pages=parsed.pages, **kw
    )


def add_pages(
    b: PromptBuilder,
    doc: Document,
    pages: list[Page] | tuple[Page, ...],
    inserts: dict[int, list[tuple[str, str]]] | None = None,
    sep: str = PAGE_SEP,
) -> None:
    """Pages joined by blank lines (R&R §4.1: 'a double-linebreak-separated list'), with blocks
    inserted before the page at index i: inserts[i] = [(kind, text), ...]. Index len(pages) = after."""
    inserts = inserts or {}
    gold = set(doc.gold)
    first = True
    for i, page in enumerate(pages):
        for kind, text in inserts.get(i, []):
            if not first:
                b.add(sep)
            b.add(text, kind)
            first = False
        if not first:
            b.add(sep)
        b.add_page(page, page.number in gold)
        first = False
    for kind, text in inserts.get(len(pages), []):
        b.add(sep)
        b.add(text, kind)


def sandwich(
    doc: Document,
    pages,
    head: str,
    tail: str,
    *,
    stage: int = 1,
    label: str = "",
    inserts: dict[int, list[tuple[str, str]]] | None = None,
    max_tokens: int = 256,
    chunk: int | None = None,
) -> Prompt:
    """R&R §3.1: INSTRUCTIONS, DOCUMENT of PAGE blocks, INSTRUCTIONS again at the end."""
    b = PromptBuilder(doc.encoding)
    b.add(head, "instruction")
    b.add("\n\n<DOCUMENT>\n")
    c0, t0 = b.chars, b.toks
    add_pages(b, doc, pages, inserts)
    if chunk is not None:
        b.mark("chunk", c0, t0, chunk=chunk)
    b.add("\n</DOCUMENT>\n\n")
    b.add(tail, "instruction")
    return b.build(stage, label, max_tokens)


_SLOT_RE = re.compile(r"(\{[a-z_]+\})")


def add_text(b: PromptBuilder, text: str, kind: str | None = "instruction") -> None:
    """Text with its leading and trailing white space left out of the span."""
    core = text.strip()
    if not core:
        b.add(text)
        return
    lead = text[: len(text) - len(text.lstrip())]
    b.add(lead)
    b.add(core, kind)
    b.add(text[len(lead) + len(core) :])


def fill(b: PromptBuilder, template: str, question: str, **blocks: Callable[[PromptBuilder], None]) -> None:
    """A template with {question} and block slots (e.g. {documents}): the template's own words
    become instruction spans, each {question} a question span, and each block slot is drawn by the
    function given for it."""
    for part in _SLOT_RE.split(template):
        if part == "{question}":
            b.add(question, "question")
        elif part[1:-1] in blocks and part.startswith("{"):
            blocks[part[1:-1]](b)
        elif part:
            add_text(b, part)
