"""Keyword assignment of questions to chunks ("Context Overloading in RAG Based Systems", a student project: §4.4, "Revised approach").

Context Overloading §4.4: stopwords are removed from the questions and the chunks, the remaining words lower-cased;
each question goes to the chunk with the most matching keywords. We count a question's distinct
keywords found in the chunk; a tie goes to the earlier chunk. Chunks are about c tokens, split
between pages (as R&R §3.4 splits them; Context Overloading §4.1 cuts by tokens), so a page is never cut.
The stopword list is NLTK's English list (Context Overloading §3 uses NLTK's), shipped here so no download is needed.
"""

from __future__ import annotations

import re

from components.core.documents import Document
from components.core.positions import chunk_ranges
from components.core.prompts import Prompt
from components.strategies.base import Param, ParamError, Strategy, sandwich
from components.strategies.rr import _answer_blocks

STOPWORDS = frozenset("""
i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves
he him his himself she she's her hers herself it it's its itself they them their theirs themselves
what which who whom this that that'll these those am is are was were be been being have has had
having do does did doing a an the and but if or because as until while of at by for with about
against between into through during before after above below to from up down in out on off over
under again further then once here there when where why how all any both each few more most other
some such no nor not only own same so than too very s t can will just don don't should should've
now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn
hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn
shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
""".split())

_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def keywords(text: str) -> list[str]:
    """Lower-cased words without stopwords or punctuation, in order (repeats kept)."""
    return [w for w in _WORD_RE.findall(text.lower()) if w not in STOPWORDS and w.replace("'", "") not in STOPWORDS]


def assign_questions(doc: Document, questions: list[str], c: int) -> list[int]:
    """For each question, the index (from 0) of the chunk of about c tokens sharing most keywords."""
    if c < 1:
        raise ParamError(f"c must be a positive whole number, got {c!r}")
    ranges = chunk_ranges(doc.offsets, c)
    chunk_words = [set(keywords(" ".join(p.text for p in doc.pages[a:b]))) for a, b in ranges]
    out = []
    for q in questions:
        words = set(keywords(q))
        hits = [len(words & cw) for cw in chunk_words]
        out.append(max(range(len(hits)), key=lambda i: (hits[i], -i)))
    return out


C = Param("c", 2_000, "chunk size c in tokens (Context Overloading §4.1 uses chunks of a few SQuAD contexts)")


class Keyword(Strategy):
    """Context Overloading §4.4: send the question with only the chunk it shares most keywords with, in the
    Baseline prompt (R&R App. A) over that chunk's pages, which keep their numbers."""

    name = "keyword"
    label = "Keyword chunk"
    summary = "Sends the question with only the chunk that shares the most keywords with it."
    paper = "Context Overloading in RAG Based Systems §4.4"
    params = (C,)

    def check(self, doc, question, params):
        p = super().check(doc, question, params)
        if p["c"] > doc.tokens:
            raise ParamError(f"c = {p['c']:,} tokens is more than the document's {doc.tokens:,} tokens")
        return p

    def first_prompts(self, doc, question, params=None) -> list[Prompt]:
        p = self.check(doc, question, params)
        ranges = chunk_ranges(doc.offsets, p["c"])
        i = assign_questions(doc, [question], p["c"])[0]
        a, b = ranges[i]
        head, tail, _ = _answer_blocks(question)
        return [sandwich(doc, doc.pages[a:b], head, tail, chunk=i + 1,
                         label=f"answer (chunk {i + 1} of {len(ranges)})")]
