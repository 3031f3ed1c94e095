"""The prompts of "Lost in the Middle: How Language Models Use Long Contexts" (Liu et al. 2023; LITM).

Formats are those its public repository builds (and which produced the published numbers): the
templates under src/lost_in_the_middle/prompts/ of nelson-liu/lost-in-the-middle; the paper's figures
show the same words with extra spacing:
- multi-document QA (§3.1): instruction, `Document [i](Title: t) text` lines, then the question;
- query-aware contextualization (§5.2): the question (or key) also before the documents;
- closed book and oracle (§3.3): no documents, or the gold document(s) only;
- key-value retrieval (§4.1): a JSON object of `"key": "value"` records and a key to look up.
Their metric reads the raw output (best subspan EM cuts it at the first newline), so the answer is
the model's text as it is.
"""

from __future__ import annotations

import json
import random
import re
import threading

from components.core.documents import Document, Page
from components.core.parsing import Parsed
from components.core.prompts import Prompt, PromptBuilder, load_template
from components.strategies.base import Param, ParamError, Strategy, fill, render

QAC = Param(
    "qac",
    0,
    "1 = query-aware contextualization: the key also before the records (LITM §5.2)",
    unit="0/1",
    minimum=0,
    maximum=1,
)

# A key-value page (LITM §4.1): its text is one JSON record, `"key": "value"`.
_RECORD_RE = re.compile(r'^"((?:[^"\\]|\\.)*)": "((?:[^"\\]|\\.)*)"$')


def kv_record(key: str, value: str) -> str:
    """The page text of one key-value record, as the LITM repository writes it: `"k": "v"`
    (JSON strings, so a quote inside a key is escaped; same as tasks.importers.kv_text)."""
    return f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}"


def kv_key(question: str) -> str:
    """The key asked for; quotes around it are dropped (`"abc"` and `abc` ask for the same key)."""
    q = question.strip()
    return q[1:-1].strip() if len(q) >= 2 and q[0] == q[-1] == '"' else q


def pages_block(doc: Document, pages: list[Page] | tuple[Page, ...]):
    """`Document [i](Title: t) text` per page, i from 1 in the order shown, joined by one newline.
    A span per document carries the page's own number, so oracle pages keep theirs."""
    head_tpl = load_template("litm_document").split("{text}")[0]
    gold = set(doc.gold)

    def draw(b: PromptBuilder) -> None:
        for i, page in enumerate(pages, start=1):
            if i > 1:
                b.add("\n")
            head = render(head_tpl, i=i, title=page.title)
            b.add(
                head + page.text,
                "gold" if page.number in gold else "page",
                page=page.number,
                tokens=b.joined_count(head, page),
            )

    return draw


def _records_block(doc: Document):
    """The JSON object (LITM §4.1, repository format): the first record opens with `{`, the others
    with a space; all but the last end with `,\\n`, the last with `}`. Spans cover `"k": "v"`."""
    gold = set(doc.gold)
    last = len(doc.pages)

    def draw(b: PromptBuilder) -> None:
        for page in doc.pages:
            b.add("{" if page.number == 1 else " ")
            b.add(page.text, "gold" if page.number in gold else "page", page=page.number, tokens=page.tokens)
            b.add("}" if page.number == last else ",\n")

    return draw


class LitmQA(Strategy):
    """LITM §3.1 multi-document QA: the documents, then the question."""

    name = "litm"
    label = "LITM QA"
    summary = "The 'Lost in the Middle' prompt: numbered documents, then the question."
    paper = "Lost in the Middle §3.1"
    metric = "subspan-em"
    template = "litm_qa"

    def pages(self, doc: Document) -> tuple[Page, ...] | list[Page]:
        return doc.pages

    def first_prompts(self, doc, question, params=None) -> list[Prompt]:
        self.check(doc, question, params)
        b = PromptBuilder(doc.encoding)
        fill(b, load_template(self.template), question, documents=pages_block(doc, self.pages(doc)))
        return [b.build(1, "answer", max_tokens=100)]

    def parse(self, text: str, doc: Document) -> Parsed:
        raw = text if isinstance(text, str) else ""
        return Parsed(bool(raw.strip()), answer=raw, error="" if raw.strip() else "empty response")


class LitmQAC(LitmQA):
    """LITM §5.2: query-aware contextualization, the question before and after the documents."""

    name = "litm-qac"
    label = "LITM QA, query-aware"
    summary = "The question both before and after the documents (query-aware contextualization)."
    paper = "Lost in the Middle §5.2"
    template = "litm_qa_qac"


_SHUFFLES: dict[int, tuple[random.Random, list[tuple[int, ...]]]] = {}
_SHUFFLES_LOCK = threading.Lock()


def reference_order(n_distractors: int, file_index: int) -> tuple[int, ...]:
    """The order LITM's reference gives the distractors of the example at `file_index` (0-based, in its
    file) when they are n_distractors long: its scripts/get_qa_responses_*.py call `random.seed(0)` once
    and then, example by example in file order, `random.shuffle` the distractors (`--use-random-ordering`).
    A shuffle's draws depend only on the list's length, so example i's order is the (i + 1)-th shuffle of
    range(n) by one Random(0); earlier examples are taken to have as many distractors (true of LITM's
    10/20/30-document files). Returns old positions in their new order."""
    if n_distractors < 0 or file_index < 0:
        raise ValueError("n_distractors and file_index must be 0 or more")
    with _SHUFFLES_LOCK:
        rng, done = _SHUFFLES.setdefault(n_distractors, (random.Random(0), []))
        while len(done) <= file_index:
            order = list(range(n_distractors))
            rng.shuffle(order)
            done.append(tuple(order))
        return done[file_index]


def shuffled_pages(doc: Document, file_index: int) -> list[Page]:
    """The document's pages with the distractors in reference_order and each gold page kept at its index
    (the reference: `distractors.insert(original_gold_index, gold)`)."""
    gold = set(doc.gold)
    distractors = [p for p in doc.pages if p.number not in gold]
    out = [distractors[i] for i in reference_order(len(distractors), file_index)]
    for i, page in enumerate(doc.pages):
        if page.number in gold:
            out.insert(i, page)
    return out


class LitmQARandom(LitmQA):
    """LITM App. C, its random-ordering run (the repository's `--use-random-ordering` with
    `--prompt-mention-random-ordering`): the distractors shuffled as the reference shuffles them
    (reference_order: `random.seed(0)` once, one `random.shuffle` per example in file order, the gold
    document kept at its index) and the instruction gains " The search results are ordered randomly."
    (`qa_ordered_randomly.prompt`). Which example of its file a document is comes from the document
    builder (doc.meta["file_index"], the task's position in its task file); a document from no file (a
    pasted one) is shuffled as a file's first example. The reference refuses random ordering together
    with query-aware contextualization, so there is no query-aware variant of it."""

    name = "litm-random"
    label = "LITM QA, random order"
    summary = (
        "The LITM prompt with the distractors shuffled (the reference's seed) and the random order noted."
    )
    paper = "Lost in the Middle App. C (seed 003)"
    template = "litm_qa_random"

    def pages(self, doc: Document) -> list[Page]:
        return shuffled_pages(doc, int(doc.meta.get("file_index") or 0))


class ClosedBook(LitmQA):
    """LITM §3.3: the lower bound, no documents at all."""

    name = "closed-book"
    label = "Closed book"
    summary = "No document at all: what the model knows by itself (lower bound)."
    paper = "Lost in the Middle §3.3"
    template = "litm_closed_book"

    def pages(self, doc):
        return ()


class Oracle(LitmQA):
    """LITM §3.3: the upper bound, only the document(s) that contain the answer."""

    name = "oracle"
    label = "Oracle (gold pages only)"
    summary = "Only the gold page(s): the upper bound."
    paper = "Lost in the Middle §3.3"
    needs_gold = True

    def pages(self, doc):
        return doc.subset(list(doc.gold))


class KeyValue(LitmQA):
    """LITM §4.1 key-value retrieval. The question is the key; each page is one record
    `"key": "value"` (see kv_record). qac = 1 puts the key before the records too (§5.2)."""

    name = "kv"
    label = "Key-value retrieval"
    summary = "Find the value of a key among JSON records (each page one record)."
    paper = "Lost in the Middle §4.1, §5.2"
    metric = "kv-match"  # its evaluate_kv_responses.py: the value anywhere in the response (core.scoring)
    params = (QAC,)

    def check(self, doc, question, params):
        p = super().check(doc, question, params)
        for page in doc.pages:
            if not _RECORD_RE.match(page.text):
                raise ParamError(
                    f'kv needs every page to be one record "key": "value"; page {page.number} is not'
                )
        if not kv_key(question):
            raise ParamError("the key is empty")
        return p

    def first_prompts(self, doc, question, params=None) -> list[Prompt]:
        p = self.check(doc, question, params)
        b = PromptBuilder(doc.encoding)
        template = load_template("litm_kv_qac" if p["qac"] else "litm_kv")
        fill(b, template, kv_key(question), documents=_records_block(doc))
        return [b.build(1, "value", max_tokens=100)]
