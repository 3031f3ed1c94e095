"""Reorder: put the pages most like the question where models read best, at the two edges.

Lost in the Middle (LITM §3.3) finds accuracy highest when the relevant document is first or
last and lowest in the middle. So we rank pages by BM25 (Okapi, rank_bm25) against the question and
place them 1st, last, 2nd, second-to-last, ...: the weakest end up in the middle. Pages keep their
original numbers (`<PAGE 7>` stays page 7), and the prompt is the Baseline prompt (R&R App. A).
"""

from __future__ import annotations

from rank_bm25 import BM25Okapi

from components.core.documents import Document, Page
from components.core.prompts import Prompt
from components.strategies.base import Strategy, sandwich
from components.strategies.keywords import keywords
from components.strategies.rr import answer_blocks


def edge_order(ranked: list[int]) -> list[int]:
    """Items best first -> an order with the best at both edges: [r0, r2, r4, ..., r5, r3, r1]."""
    return ranked[0::2] + ranked[1::2][::-1]


def bm25_ranking(doc: Document, question: str) -> list[int]:
    """Page indices (from 0), best BM25 score first; ties keep document order."""
    corpus = [keywords(p.text) or [""] for p in doc.pages]
    scores = BM25Okapi(corpus).get_scores(keywords(question))
    return sorted(range(len(doc.pages)), key=lambda i: -scores[i])


def reorder_pages(doc: Document, question: str) -> list[Page]:
    return [doc.pages[i] for i in edge_order(bm25_ranking(doc, question))]


class Reorder(Strategy):
    name = "reorder"
    label = "Reorder (BM25, best at the edges)"
    summary = "Ranks pages by BM25 and puts the best at both edges, the weakest in the middle."
    paper = "Lost in the Middle §3.3 + R&R App. A prompt"

    def first_prompts(self, doc, question, params=None) -> list[Prompt]:
        self.check(doc, question, params)
        head, tail, _ = answer_blocks(question)
        return [sandwich(doc, reorder_pages(doc, question), head, tail, label="answer")]
