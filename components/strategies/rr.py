"""The strategies of "Can't Remember Details in Long Documents? You Need Some R&R" (Agrawal et al. 2024; R&R).

Template words are App. A's, verbatim; line breaks are ours (the extraction loses them), and so are
the {format_instructions} (App. A leaves them unspecified): templates/format_answer.txt and
templates/format_pages.txt.
"""

from __future__ import annotations

from components.core.completion import Ask
from components.core.documents import Document, Page
from components.core.parsing import Parsed, parse_pages
from components.core.positions import chunk_ranges, every
from components.core.prompts import Prompt, load_template
from components.core.tagged import tagged_offsets
from components.strategies.base import (
    Outcome,
    Param,
    ParamError,
    Strategy,
    answer_outcome,
    fmt,
    render,
    sandwich,
)

R = Param("r", 10_000, "reprompt every r tokens (R&R §4.2 default: 10k)", step=100)
K = Param("k", 5, "retrieve up to k pages (R&R §4.2 default: 5)", unit="pages")
C = Param("c", 20_000, "chunk size c in tokens (R&R §3.4, Table 2: 10k-80k)", step=1000)


def answer_blocks(question: str) -> tuple[str, str, str]:
    """(instructions, final, reminder) of the answer stage: R&R's, and the strategies built on it."""
    f = fmt("answer")
    instructions, final, reminder = (
        render(load_template(f"rr_answer_{part}"), question=question, format_instructions=f)
        for part in ("instructions", "final", "reminder")
    )
    return instructions, final, reminder


def _retrieve_blocks(question: str, k: int) -> tuple[str, str, str]:
    f = fmt("pages")
    instructions, final, reminder = (
        render(load_template(f"rr_retrieve_{part}"), question=question, k=k, format_instructions=f)
        for part in ("instructions", "final", "reminder")
    )
    return instructions, final, reminder


def reminder_inserts(
    doc: Document,
    pages: list[Page] | tuple[Page, ...],
    r: int | None,
    reminder: str,
    variant: str = "uniform",
) -> dict[int, list[tuple[str, str]]]:
    """Where reminder blocks go, as {index of the page they precede: [("reminder", text)]}.

    - uniform (§3.2): at the page boundary nearest each multiple of r tokens, never inside a page, and
      none in the last half step (core.positions.every: d/r - 1 reminders in a document of about d);
    - tags-only (§5.2, Table 6): same places, the reminder only alludes to the INSTRUCTIONS tag;
    - at-beginning (Table 6): the same number of reminders, all before the first page;
    - before-gold (Table 6, "Before answer only"): one reminder right before each gold page.
    Positions count the document as the prompt holds it (R&R §4.1: its pages in their PAGE tags, a blank
    line between two; core.tagged), not the instructions nor the reminders already placed.
    """
    if variant == "before-gold":
        gold = set(doc.gold)
        return {i: [("reminder", reminder)] for i, p in enumerate(pages) if p.number in gold}
    points = every(tagged_offsets(pages, doc.encoding), r) if r else []
    if variant == "at-beginning":
        return {0: [("reminder", reminder)] * len(points)} if points else {}
    return {i: [("reminder", reminder)] for i in points}


class Baseline(Strategy):
    name = "baseline"
    label = "Baseline"
    summary = "Instructions before and after the document; the model answers and names its page."
    paper = "R&R §3.1, App. A"

    def first_prompts(self, doc, question, params=None) -> list[Prompt]:
        self.check(doc, question, params)
        head, tail, _ = answer_blocks(question)
        return [sandwich(doc, doc.pages, head, tail, label="answer")]


class Reprompt(Strategy):
    """R&R §3.2: the INSTRUCTIONS_REMINDER block injected about every r tokens, between pages."""

    name = "reprompt"
    label = "Reprompt"
    summary = "Repeats the instructions as a reminder block about every r tokens, between pages."
    paper = "R&R §3.2, App. A"
    params: tuple[Param, ...] = (R,)
    variant = "uniform"

    def first_prompts(self, doc, question, params=None) -> list[Prompt]:
        p = self.check(doc, question, params)
        head, tail, reminder = answer_blocks(question)
        if self.variant == "tags-only":
            reminder = load_template("rr_tags_only_reminder")
        inserts = reminder_inserts(doc, doc.pages, p.get("r"), reminder, self.variant)
        return [sandwich(doc, doc.pages, head, tail, inserts=inserts, label="answer")]


class RepromptTagsOnly(Reprompt):
    name = "reprompt-tags-only"
    label = "Reprompt: tags only"
    summary = "Reminders every r tokens that only point back to the INSTRUCTIONS tag."
    paper = "R&R §5.2, Table 6"
    variant = "tags-only"


class RepromptAtBeginning(Reprompt):
    name = "reprompt-at-beginning"
    label = "Reprompt: all at beginning"
    summary = "The same number of reminders, all placed before the first page."
    paper = "R&R §5.2, Table 6"
    variant = "at-beginning"


class RepromptBeforeGold(Reprompt):
    name = "reprompt-before-gold"
    label = "Reprompt: before gold page"
    summary = "One reminder right before the gold page (needs the gold page marked)."
    paper = "R&R §5.2, Table 6"
    variant = "before-gold"
    params = ()
    needs_gold = True


class ICR(Strategy):
    """R&R §3.3: stage 1 retrieves up to k page numbers; stage 2 answers from only those pages."""

    name = "icr"
    label = "ICR"
    summary = "Stage 1 asks for up to k page numbers; stage 2 answers from only those pages."
    paper = "R&R §3.3, App. A"
    params: tuple[Param, ...] = (K,)
    stages = 2
    reprompt = False

    def check(self, doc, question, params):
        p = super().check(doc, question, params)
        if p["k"] > len(doc.pages):
            raise ParamError(f"k = {p['k']} is more than the document's {len(doc.pages)} pages")
        return p

    def retrieve_prompt(self, doc, question, p, pages, chunk: int | None = None, label="retrieve") -> Prompt:
        head, tail, reminder = _retrieve_blocks(question, p["k"])
        inserts = reminder_inserts(doc, pages, p.get("r"), reminder) if self.reprompt else None
        return sandwich(doc, pages, head, tail, inserts=inserts, label=label, chunk=chunk, max_tokens=64)

    def answer_prompt(self, doc, question, pages: list[Page]) -> Prompt:
        head, tail, _ = answer_blocks(question)
        return sandwich(doc, pages, head, tail, stage=2, label="answer from retrieved pages")

    def first_prompts(self, doc, question, params=None) -> list[Prompt]:
        p = self.check(doc, question, params)
        return [self.retrieve_prompt(doc, question, p, doc.pages)]

    def parse_retrieval(self, texts: list[str], doc: Document, k: int) -> tuple[tuple[int, ...], list[str]]:
        pages: list[int] = []
        errors: list[str] = []
        for text in texts:
            got: Parsed = parse_pages(text, len(doc.pages), limit=k)
            if got.ok:
                pages.extend(n for n in got.pages if n not in pages)
            else:
                errors.append(f"retrieval: {got.error}")
        return tuple(pages), errors

    async def run(self, doc, question, params, ask: Ask) -> Outcome:
        p = self.check(doc, question, params)
        first = self.first_prompts(doc, question, p)
        done = [await ask(pr) for pr in first]
        pages, errors = self.parse_retrieval([c.text for c in done], doc, p["k"])
        if not pages:
            empty = Parsed(False, error="; ".join(errors) or "no pages retrieved")
            return Outcome("", empty, first, done, retrieved_pages=(), stage_errors=errors)
        second = self.answer_prompt(doc, question, doc.subset(list(pages)))
        final = await ask(second)
        return answer_outcome(
            self.parse(final.text, doc),
            [*first, second],
            [*done, final],
            retrieved_pages=pages,
            stage_errors=errors,
        )


class RR(ICR):
    """R&R §3.3: ICR with INSTRUCTIONS_REMINDER blocks of the retrieval instructions in stage 1."""

    name = "rr"
    label = "R&R"
    summary = "ICR with reminders every r tokens in the retrieval stage (reprompting + retrieval)."
    params = (R, K)
    reprompt = True


class ChunkedICR(ICR):
    """R&R §3.4: chunks of about c tokens split between pages; one retrieval call per chunk
    (up to k pages each), pooled; one answer call. Calls m = d/c + 1 (Table 3: 9/5/3/2 at d = 80k,
    c = 10k/20k/40k/80k): a tail shorter than half a chunk joins the previous chunk, and c at or past
    the document's length is one chunk (core.positions.chunk_ranges). Chunk sizes count the document as
    the prompt holds it, PAGE tags included (core.tagged), as its length d does."""

    name = "chunked-icr"
    label = "Chunked ICR"
    summary = "Chunks of about c tokens: one retrieval call per chunk, then one answer call."
    paper = "R&R §3.4"
    params: tuple[Param, ...] = (K, C)

    def chunks(self, doc: Document, c: int) -> list[tuple[Page, ...]]:
        return [doc.pages[a:b] for a, b in chunk_ranges(tagged_offsets(doc.pages, doc.encoding), c)]

    def first_prompts(self, doc, question, params=None) -> list[Prompt]:
        p = self.check(doc, question, params)
        chunks = self.chunks(doc, p["c"])
        return [
            self.retrieve_prompt(
                doc, question, p, pages, chunk=i + 1, label=f"retrieve (chunk {i + 1} of {len(chunks)})"
            )
            for i, pages in enumerate(chunks)
        ]


class ChunkedRR(ChunkedICR):
    """R&R §3.4: chunked ICR with reminders every r tokens inside each chunk, placed as in a whole
    document (core.positions.every): a chunk of about r tokens gets none (Table 2: "reprompting is
    not done" at c = 10k with r = 10k), a chunk of about 2r one."""

    name = "chunked-rr"
    label = "Chunked R&R"
    summary = "Chunked ICR with reminders every r tokens inside each chunk."
    params = (R, K, C)
    reprompt = True
