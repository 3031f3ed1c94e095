"""Multi-question answering ("Context Overloading in RAG Based Systems", a student project; seed 004).

The paper's experiment (§4.1-4.4, §5.1, §5.3): K SQuAD paragraphs ("contexts") make one document, Q
questions come from each, and the K x Q questions are answered at once. Three ways to ask them:

- `mq-full` (§4.1, §5.1): the whole document and every question in one prompt.
- `mq-chunked` (§4.3, "Initial approach"): the document cut into chunks of about `chunk_tokens` (800,
  as §4.3 says), every question sent with every chunk; a question's answer is the first one, in chunk
  order, that is not "Not specified" (the paper's "interleaving": "we expected to replace 'Not
  Specified' answers with answers from other LLM calls where the question was seemingly addressed").
- `mq-keyword` (§4.4, "Revised approach"): each question goes to the chunk sharing the most keywords
  with it (NLTK stopwords out, lower-cased; ties to the earlier chunk: strategies.keywords.best_chunks),
  one prompt per chunk that received questions, sent one after the other; the answers are parsed back
  to their questions in the original order.

Every prompt starts with Figure 19's "instruction headlines for each prompt" (templates/mq_instructions.txt),
then the context and the questions numbered `Q1:`, `Q2:`, ... (numbered from 1 in each prompt); the answers
are read from the `A1:`, `A2:`, ... lines the instructions ask for (parse_numbered).

Figure 19 is printed as a garbled code snippet; templates/mq_instructions.txt is our reading of it, its
three lines in the order printed. Read as: line 1 "... questions as precisely as you can, in as minimum
words as you can" (its first words are illegible: "Answer the" is ours, and its end "can," is read as
"can."); line 2 `**Format your answers with "A1:", "A2:", etc. at the beginning of each answer**` (printed
twice, as other lines of the paper's figures are, and with "A1:", "A2:" garbled as "Ail", "22!"; the closing
`**` is ours, as line 3 has one); line 3 `**If you cannot find enough information in the provided context to
answer a question, respond with "Not specified". Do NOT guess.**` ("ambuer" and "quess" read as "answer"
and "guess"). The paper does not print the rest of its prompt; templates/mq_prompt.txt is ours: the
instructions, a blank line, "Context:" and the contexts separated by blank lines, a blank line,
"Questions:" and one `Qn: question` line each.

Chunks (§4.3: "segmented into chunks of approximately 800 tokens each"; §5.1 plans chunks that leave room
for the questions): whole contexts in order, a chunk taking the next context while it stays within
`chunk_tokens` (a context longer than that is a chunk of its own), so no context is cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from components.core.completion import Completion
from components.core.documents import Document
from components.core.parsing import Parsed
from components.core.prompts import Prompt, PromptBuilder, load_template
from components.core.scoring import is_not_specified
from components.strategies.base import Outcome, Param, ParamError, Strategy, add_text, check_question, fill
from components.strategies.keywords import best_chunks

CHUNK_TOKENS = Param(
    "chunk_tokens",
    800,
    "chunk size in tokens: whole contexts, at most this many unless one "
    "context is longer (Context Overloading §4.3: about 800)",
    label="chunk size (tokens)",
)
ANSWER_TOKENS, BASE_TOKENS = 24, 32  # the output budget of a prompt: BASE_TOKENS + ANSWER_TOKENS a question


@dataclass(frozen=True)
class MQPrompt:
    """One prompt of a multi-question strategy and the questions it asks."""

    prompt: Prompt
    questions: tuple[
        int, ...
    ]  # indices (from 0) of the document's questions, asked as Q1, Q2, ... in this order
    chunk: int | None = None  # 1-based chunk number; None for the whole document


@dataclass(frozen=True)
class Answered:
    """One question's answer, read from the prompts that asked it."""

    answer: str  # "" when no prompt had its answer line
    line: str = ""  # the answer line as the model wrote it ("" when missing)
    prompt: int | None = None  # index (in the plan) of the prompt whose answer was taken
    error: str = ""  # why no answer could be read ("" when one was)

    @property
    def not_specified(self) -> bool:
        return is_not_specified(self.answer)


# "A1: ...", "**A1:** ...", "- A1. ...", "a1) ..."; the answer may start on the next line
_A_LINE = re.compile(r"^[\s>*_#`-]*A\s*(\d{1,5})\s*[*_]*\s*[:.)]\s*[*_]*[ \t]*(.*)$", re.IGNORECASE)
_Q_LINE = re.compile(r"^[\s>*_#`-]*Q\s*\d{1,5}\s*[*_]*\s*[:.)]", re.IGNORECASE)


def _clean(text: str) -> str:
    text = text.strip().strip("*_` ").strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


def parse_numbered(text: str, n: int) -> dict[int, tuple[str, str]]:
    """The answers of a response to n numbered questions: {number (1..n): (answer, line as written)}.
    An answer line is `An: answer` (markdown bold, a list dash, `An.` or `An)` accepted, any case); when
    nothing follows the colon, the next line that is neither an answer nor a question line is the answer.
    The first line for a number counts (a repeat is ignored), as do numbers 1..n only; other text (an
    echoed `Qn:` line, a preamble, a closing remark) is ignored."""
    lines = (text or "").splitlines()
    out: dict[int, tuple[str, str]] = {}
    for i, line in enumerate(lines):
        m = _A_LINE.match(line)
        if m is None:
            continue
        number, answer = int(m.group(1)), _clean(m.group(2))
        if not 1 <= number <= n or number in out:
            continue
        written = line.strip()
        if not answer:
            nxt = next((x for x in lines[i + 1 :] if x.strip()), "")
            if nxt and not _A_LINE.match(nxt) and not _Q_LINE.match(nxt):
                answer, written = _clean(nxt), f"{written}\n{nxt.strip()}"
        out[number] = (answer, written)
    return out


def context_chunks(doc: Document, chunk_tokens: int) -> list[tuple[int, int]]:
    """[(first page index, end index exclusive), ...]: whole pages in order, each chunk taking the next page
    while it stays within chunk_tokens (a page longer than that is a chunk of its own)."""
    if chunk_tokens < 1:
        raise ParamError(f"chunk_tokens must be a positive whole number, got {chunk_tokens!r}")
    out, start, size = [], 0, 0
    for i, page in enumerate(doc.pages):
        if i > start and size + page.tokens > chunk_tokens:
            out.append((start, i))
            start, size = i, 0
        size += page.tokens
    if doc.pages:
        out.append((start, len(doc.pages)))
    return out


def build_prompt(
    doc: Document, pages, questions: list[str], *, chunk: int | None = None, label: str = ""
) -> Prompt:
    """Figure 19's instructions, the pages as the context (blank lines between them), the questions as
    `Q1: ...` lines (templates/mq_prompt.txt). Spans: instruction, page (gold for doc.gold), chunk, question."""
    gold = set(doc.gold)
    b = PromptBuilder(doc.encoding)

    def instructions(b: PromptBuilder) -> None:
        add_text(b, load_template("mq_instructions"))

    def context(b: PromptBuilder) -> None:
        c0, t0 = b.chars, b.toks
        for i, page in enumerate(pages):
            if i:
                b.add("\n\n")
            b.add_page(page, page.number in gold, wrapper="{text}")
        if chunk is not None:
            b.mark("chunk", c0, t0, chunk=chunk)

    def numbered(b: PromptBuilder) -> None:
        for k, q in enumerate(questions, 1):
            if k > 1:
                b.add("\n")
            b.add(f"Q{k}: ")
            add_text(b, q, "question")

    fill(b, load_template("mq_prompt"), "", instructions=instructions, context=context, questions=numbered)
    return b.build(1, label, BASE_TOKENS + ANSWER_TOKENS * len(questions))


class MultiQuestion(Strategy):
    """Base of the three: plan(doc, questions, params) lists the prompts (all known before any answer);
    combine(plan, texts, n) reads each question's answer from the responses. A single question (the
    Playground, `litm prompt`) is the case n = 1."""

    metric = "mq-match"
    paper = "Context Overloading in RAG Based Systems"

    def check_questions(self, doc: Document, questions: list[str], params: dict | None) -> dict:
        if not questions:
            raise ParamError("no questions to ask")
        for q in questions:
            check_question(q)
        return self.check(doc, questions[0], params)

    def plan(self, doc: Document, questions: list[str], params: dict | None = None) -> list[MQPrompt]:
        raise NotImplementedError

    def first_prompts(self, doc, question, params=None) -> list[Prompt]:
        return [a.prompt for a in self.plan(doc, [question], params)]

    @staticmethod
    def combine(plan: list[MQPrompt], texts: list[str | None], n: int) -> list[Answered]:
        """Each question's answer: the first, in plan order, of the prompts that asked it, that is not "Not
        specified"; else the first "Not specified"; else none (its error says which line was missing).
        texts[j] is prompt j's response (None: its call failed; the runner reports that instead)."""
        found: list[list[tuple[int, str, str]]] = [[] for _ in range(n)]
        for j, (ask, text) in enumerate(zip(plan, texts, strict=True)):
            if text is None:
                continue
            parsed = parse_numbered(text, len(ask.questions))
            for k, i in enumerate(ask.questions, 1):
                if k in parsed:
                    found[i].append((j, *parsed[k]))
        out = []
        for i in range(n):
            given = [f for f in found[i] if not is_not_specified(f[1])] or found[i]
            if given:
                j, answer, line = given[0]
                out.append(Answered(answer, line, j))
            else:
                lines = [
                    f"A{plan[j].questions.index(i) + 1}:" for j in range(len(plan)) if i in plan[j].questions
                ]
                out.append(
                    Answered("", "", None, f"no {' or '.join(lines) or 'answer'} line in the response")
                )
        return out

    async def run(self, doc, question, params, ask) -> Outcome:
        plan = self.plan(doc, [question], params)
        completions: list[Completion] = [await ask(a.prompt) for a in plan]
        got = self.combine(plan, [c.text for c in completions], 1)[0]
        parsed = Parsed(bool(got.line), got.answer, error=got.error)
        return Outcome(got.answer, parsed, [a.prompt for a in plan], completions)


class MQFull(MultiQuestion):
    name = "mq-full"
    label = "Multi-question: whole context"
    summary = "Asks every question at once, with the whole document (answers numbered A1, A2, ...)."
    paper = "Context Overloading in RAG Based Systems §4.1, §5.1"

    def plan(self, doc, questions, params=None):
        self.check_questions(doc, questions, params)
        return [
            MQPrompt(
                build_prompt(
                    doc,
                    doc.pages,
                    questions,
                    label=f"{len(questions)} question{'s' if len(questions) != 1 else ''}",
                ),
                tuple(range(len(questions))),
            )
        ]


class MQChunked(MultiQuestion):
    name = "mq-chunked"
    label = "Multi-question: every chunk"
    summary = (
        "Sends every question with each chunk of about chunk_tokens; a question's answer is the first "
        'that is not "Not specified".'
    )
    paper = "Context Overloading in RAG Based Systems §4.3"
    params = (CHUNK_TOKENS,)

    def plan(self, doc, questions, params=None):
        p = self.check_questions(doc, questions, params)
        ranges = context_chunks(doc, p["chunk_tokens"])
        every = tuple(range(len(questions)))
        return [
            MQPrompt(
                build_prompt(doc, doc.pages[a:b], questions, chunk=c, label=f"chunk {c} of {len(ranges)}"),
                every,
                c,
            )
            for c, (a, b) in enumerate(ranges, 1)
        ]


class MQKeyword(MultiQuestion):
    name = "mq-keyword"
    label = "Multi-question: keyword chunks"
    summary = (
        "Sends each question only with the chunk sharing the most keywords with it, one prompt per chunk."
    )
    paper = "Context Overloading in RAG Based Systems §4.4"
    params = (CHUNK_TOKENS,)

    def assign(self, doc: Document, questions: list[str], chunk_tokens: int) -> list[int]:
        """The chunk (index from 0 into context_chunks) of each question (§4.4)."""
        ranges = context_chunks(doc, chunk_tokens)
        return best_chunks(questions, [" ".join(p.text for p in doc.pages[a:b]) for a, b in ranges])

    def plan(self, doc, questions, params=None):
        p = self.check_questions(doc, questions, params)
        ranges = context_chunks(doc, p["chunk_tokens"])
        chosen = self.assign(doc, questions, p["chunk_tokens"])
        out = []
        for c, (a, b) in enumerate(ranges):
            mine = tuple(i for i, x in enumerate(chosen) if x == c)
            if mine:
                out.append(
                    MQPrompt(
                        build_prompt(
                            doc,
                            doc.pages[a:b],
                            [questions[i] for i in mine],
                            chunk=c + 1,
                            label=f"chunk {c + 1} of {len(ranges)}: {len(mine)} question{'s' if len(mine) != 1 else ''}",
                        ),
                        mine,
                        c + 1,
                    )
                )
        return out


MULTI_QUESTION = ("mq-full", "mq-chunked", "mq-keyword")
