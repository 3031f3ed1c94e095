"""The prompts compared in "ALR2: A Retrieve-then-Reason Framework" (Li et al.; ALR2: App. B,
Figures 3-6: retrieve-then-reason, direct answer, quotes first, System 2 Attention). Their words are
the figures', verbatim (typos included); line breaks are ours, since the extraction loses them, and
so are straight quotes where the figures show curly ones.

{CONTEXT}: the pages' text joined by blank lines, without page tags. ALR2's contexts are
concatenated passages (App. B.1), and retrieved sentences are checked against the document text
(§5.1), so the model sees plain text; spans still say where each page lies.
ALR2 reports exact match (EM, §4), so that is the metric of all four; on RULER's NIAH tasks it follows
RULER's setup ("Following the setup of Ruler, we report the average EM score"), so there the metric is
RULER's own (core.metrics.KIND_METRICS: string_match_all), which a task's metric names.
"""

from __future__ import annotations

from components.core.completion import Ask
from components.core.documents import Document, Page
from components.core.parsing import Parsed, parse_answer, parse_quotes_and_answer, parse_sentences
from components.core.prompts import Prompt, PromptBuilder, load_template
from components.strategies.base import OneCall, Outcome, Strategy, answer_outcome, fill


def context_block(doc: Document, pages: list[Page] | tuple[Page, ...] | None = None):
    """{CONTEXT}: page texts joined by blank lines, a span per page."""
    pages = doc.pages if pages is None else pages
    gold = set(doc.gold)

    def draw(b: PromptBuilder) -> None:
        for i, page in enumerate(pages):
            if i:
                b.add("\n\n")
            b.add(page.text, "gold" if page.number in gold else "page", page=page.number, tokens=page.tokens)

    return draw


def _prompt(
    doc: Document,
    template: str,
    question: str,
    stage: int = 1,
    label: str = "",
    max_tokens: int = 256,
    **blocks,
) -> Prompt:
    b = PromptBuilder(doc.encoding)
    fill(b, load_template(template), question, **blocks)
    return b.build(stage, label, max_tokens)


def _plain_answer(text: str, doc: Document) -> Parsed:
    """'Only give me the answer': the answer line (an 'Answer:' field if the model wrote one)."""
    return parse_answer(text, len(doc.pages))


class DirectAnswer(OneCall):
    """ALR2 Fig. 4 (DA, every "DA" row of its tables): one call, the context between the instruction
    said twice, then the question; the reply is the answer."""

    name = "direct-answer"
    label = "Direct answer"
    summary = "One call: the documents, then the question; the reply is the answer."
    paper = "ALR2 Fig. 4"
    metric = "exact"
    follows_task_metric = True

    def prompt(self, doc, question, params) -> Prompt:
        return _prompt(
            doc, "alr2_direct_answer", question, label="answer", max_tokens=64, documents=context_block(doc)
        )

    def parse(self, text, doc):
        return _plain_answer(text, doc)


class RetrieveThenReason(Strategy):
    """ALR2 Fig. 3 (RR prompting): stage 1 retrieves the relevant sentences as '-' bullets; stage 2
    answers, continuing stage 1's conversation.

    Stage 2's messages (Fig. 3, Eq. 3: the answer is conditioned on the retrieved sentences, the
    question and the context): user [stage 1's input: instruction, context, question, the ask for
    sentences] -> assistant [stage 1's output, as the model wrote it] -> user [the figure's stage-2
    input: "Please answer the question based on the given retrieved information. Only give me the
    answer and do not output any other words. Question: ... Answer:"]. Nothing is added that the
    figure does not have. If stage 1 wrote no '-' bullets, the conversation still goes on with its
    output, and the failure is noted; if it wrote nothing, there is no stage 2.
    """

    name = "retrieve-then-reason"
    label = "Retrieve-then-reason"
    summary = "Stage 1 quotes the relevant sentences; stage 2 answers in the same conversation."
    paper = "ALR2 Fig. 3"
    stages = 2
    metric = "exact"
    follows_task_metric = True
    keeps_context = True  # stage 2 resends stage 1's prompt (run/estimate.py counts it)

    def first_prompts(self, doc, question, params=None) -> list[Prompt]:
        self.check(doc, question, params)
        return [
            _prompt(
                doc,
                "alr2_rr_retrieve",
                question,
                label="retrieve sentences",
                max_tokens=512,
                documents=context_block(doc),
            )
        ]

    def answer_prompt(self, doc: Document, question: str, first: Prompt, retrieved: str) -> Prompt:
        """Stage 2: the figure's stage-2 input, after stage 1's exchange (first prompt, its output)."""
        b = PromptBuilder(doc.encoding)
        fill(b, load_template("alr2_rr_answer"), question)
        return b.build(
            2,
            "answer (continues stage 1's conversation)",
            64,
            history=(*first.history, ("user", first.text), ("assistant", retrieved)),
        )

    async def run(self, doc, question, params, ask: Ask) -> Outcome:
        first = self.first_prompts(doc, question, params)
        done = await ask(first[0])
        got = parse_sentences(done.text)
        errors = [] if got.ok else [f"retrieval: {got.error}"]
        retrieved = (done.text or "").strip()
        if not retrieved:
            return Outcome(
                "", Parsed(False, error="no sentences retrieved"), first, [done], stage_errors=errors
            )
        second = self.answer_prompt(doc, question, first[0], retrieved)
        final = await ask(second)
        return answer_outcome(
            self.parse(final.text, doc),
            [*first, second],
            [done, final],
            sentences=got.sentences,
            stage_errors=errors,
        )

    def parse(self, text, doc):
        return _plain_answer(text, doc)


class QuotesFirst(OneCall):
    """ALR2 Fig. 5 (QF): one call that writes the relevant quotes, then 'Answer:' (the quotes are kept)."""

    name = "quotes-first"
    label = "Quotes first"
    summary = "One call that first writes the relevant quotes, then the answer."
    paper = "ALR2 Fig. 5"
    metric = "exact"
    follows_task_metric = True

    def prompt(self, doc, question, params) -> Prompt:
        return _prompt(
            doc,
            "alr2_quotes_first",
            question,
            label="quotes and answer",
            max_tokens=512,
            documents=context_block(doc),
        )

    def parse(self, text, doc):
        return parse_quotes_and_answer(text)


class S2A(Strategy):
    """ALR2 Fig. 6 (System 2 Attention): stage 1 rewrites the user's text (the direct-answer prompt
    of Fig. 4 around the context) into an unbiased context and the question; stage 2 sends only that
    rewritten text, the chat history discarded, and its reply is the answer."""

    name = "s2a"
    label = "System 2 Attention"
    summary = "Stage 1 rewrites the context, keeping only what matters; stage 2 answers from it."
    paper = "ALR2 Fig. 6"
    stages = 2
    metric = "exact"
    follows_task_metric = True

    def first_prompts(self, doc, question, params=None) -> list[Prompt]:
        self.check(doc, question, params)
        return [
            _prompt(
                doc,
                "alr2_s2a_extract",
                question,
                label="extract context",
                max_tokens=1024,
                documents=context_block(doc),
            )
        ]

    def answer_prompt(self, doc: Document, compressed: str) -> Prompt:
        b = PromptBuilder(doc.encoding)
        b.add(compressed)
        return b.build(2, "answer from the rewritten text", 64)

    async def run(self, doc, question, params, ask: Ask) -> Outcome:
        first = self.first_prompts(doc, question, params)
        done = await ask(first[0])
        compressed = (done.text or "").strip()
        if not compressed:
            return Outcome(
                "",
                Parsed(False, error="stage 1 returned nothing"),
                first,
                [done],
                stage_errors=["extract: empty response"],
            )
        second = self.answer_prompt(doc, compressed)
        final = await ask(second)
        return answer_outcome(self.parse(final.text, doc), [*first, second], [done, final])

    def parse(self, text, doc):
        return _plain_answer(text, doc)
