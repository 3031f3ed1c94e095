"""Keyword assignment of questions to chunks ("Context Overloading in RAG Based Systems", a student project: §4.4, "Revised approach").

Context Overloading §4.4: stopwords are removed from the questions and the chunks, the remaining words lower-cased;
each question goes to the chunk with the most matching keywords. We count a question's distinct
keywords found in the chunk; a tie goes to the earlier chunk. Chunks are about c tokens, split
between pages (as R&R §3.4 splits them; Context Overloading §4.1 cuts by tokens), so a page is never cut.
The stopword list is NLTK's English list (Context Overloading §3 uses NLTK's), shipped as components/data/
stopwords_en.txt so no download is needed (core.scoring reads it).
"""

from __future__ import annotations

from components.core.documents import Document
from components.core.positions import chunk_ranges
from components.core.prompts import Prompt
from components.core.scoring import STOPWORDS, keywords
from components.strategies.base import Param, ParamError, Strategy, sandwich
from components.strategies.rr import answer_blocks

__all__ = ["STOPWORDS", "Keyword", "assign_questions", "best_chunks", "keywords"]


def best_chunks(questions: list[str], chunk_texts: list[str]) -> list[int]:
    """For each question, the index (from 0) of the chunk text sharing the most of its distinct keywords
    (keywords(): lower-cased, NLTK stopwords out); a tie goes to the earlier chunk."""
    chunk_words = [set(keywords(t)) for t in chunk_texts]
    out = []
    for q in questions:
        words = set(keywords(q))
        hits = [len(words & cw) for cw in chunk_words]
        out.append(max(range(len(hits)), key=lambda i: (hits[i], -i)))
    return out


def assign_questions(doc: Document, questions: list[str], c: int) -> list[int]:
    """For each question, the index (from 0) of the chunk of about c tokens sharing most keywords."""
    if c < 1:
        raise ParamError(f"c must be a positive whole number, got {c!r}")
    ranges = chunk_ranges(doc.offsets, c)
    return best_chunks(questions, [" ".join(p.text for p in doc.pages[a:b]) for a, b in ranges])


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
        head, tail, _ = answer_blocks(question)
        return [
            sandwich(
                doc, doc.pages[a:b], head, tail, chunk=i + 1, label=f"answer (chunk {i + 1} of {len(ranges)})"
            )
        ]
