"""Multi-document task sets from single-passage ones, with retrieved distractors.

"Lost in the Middle" (LITM) §2.1 gives each NaturalQuestions-Open question its gold passage and
k - 1 distractors: "the Wikipedia chunks that are most relevant to the question and do not contain
any of the NaturalQuestions-annotated answers", "presented in order of decreasing relevance". Its
distractors come from Contriever over all of Wikipedia, which is not available here. This module
does the closest thing it can with what ships: it ranks the OTHER questions' passages by BM25
(Okapi, rank_bm25) against the question, drops every passage that holds an answer, and keeps the
top k - 1 in decreasing relevance. These distractors are easier than the paper's (a smaller, less
related pool): say so wherever such a set is shown.

"Holds an answer" is LITM's `hasanswer` in spirit: the SQuAD-normalised answer occurs as a whole
word sequence in the normalised passage (title and text). Answers that normalise to nothing (the
NQ answer `*`) cannot be checked and are ignored.
"""

from __future__ import annotations

import numpy as np
from rank_bm25 import BM25Okapi

from components.core.scoring import normalize_answer
from components.strategies.keywords import keywords
from components.tasks.model import Passage, Task


class Relevance:
    """Passages ranked by BM25 (Okapi, rank_bm25) relevance to a question: the title and text of each
    passage and the question as keywords (components.strategies.keywords). Built once per set of
    passages; `ranked(question)` is the passages' indices, most relevant first (ties in given order).

    The scores are rank_bm25's `get_scores`, bit for bit, from an inverted index built once: that method
    walks every passage's term counts for every query term (a sweep's shared pool of 4,000 passages took
    4 ms a trial); here only the passages holding a term are touched. A passage without the term adds
    idf * 0.0, which leaves its score as it is, and every other figure is the same float operation on the
    same operands (tests/test_tasks_sweepdocs.py compares the two on whole pools)."""

    def __init__(self, passages) -> None:
        self.n = len(passages)
        self.bm25 = BM25Okapi([keywords(f"{p.title} {p.text}") or [""] for p in passages]) if self.n else None
        self._index: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
        self._norm: np.ndarray | None = None

    def _postings(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """{term: (indices of the passages holding it, its count in each)}, and each passage's length
        term k1 * (1 - b + b * len / avgdl), as get_scores computes them."""
        if self._index is None:
            bm = self.bm25
            assert bm is not None
            lists: dict[str, tuple[list[int], list[int]]] = {}
            for i, freqs in enumerate(bm.doc_freqs):
                for term, n in freqs.items():
                    at = lists.setdefault(term, ([], []))
                    at[0].append(i)
                    at[1].append(n)
            self._index = {t: (np.array(i), np.array(n)) for t, (i, n) in lists.items()}
            self._norm = bm.k1 * (1 - bm.b + bm.b * np.array(bm.doc_len) / bm.avgdl)
        return self._index

    def scores(self, question: str) -> np.ndarray:
        """rank_bm25's BM25Okapi.get_scores(keywords(question)), bit for bit."""
        bm = self.bm25
        assert bm is not None
        index = self._postings()
        score = np.zeros(bm.corpus_size)
        for q in keywords(question):
            hit = index.get(q)
            idf = bm.idf.get(q) or 0
            if hit is None or not idf:  # every passage adds 0.0 (rank_bm25: idf * 0 / ...)
                continue
            at, q_freq = hit
            score[at] += idf * (q_freq * (bm.k1 + 1) / (q_freq + self._norm[at]))  # type: ignore[index]
        return score

    def order(self, question: str) -> np.ndarray:
        """The passages' indices, most relevant first (ties in given order), as an array."""
        if self.bm25 is None:  # no passages
            return np.zeros(0, dtype=np.intp)
        return np.argsort(-self.scores(question), kind="stable")

    def ranked(self, question: str) -> list[int]:
        return self.order(question).tolist()


def holds_answer(passage: Passage, answers) -> bool:
    text = f" {normalize_answer(passage.title + ' ' + passage.text)} "
    return any(n and f" {n} " in text for n in (normalize_answer(a) for a in answers))


def with_retrieved_distractors(
    tasks: list[Task], n_distractors: int, *, limit: int | None = None
) -> list[Task]:
    """The first `limit` tasks (all by default), each with its gold passage(s) first and then the
    `n_distractors` most BM25-relevant passages of the other tasks that hold none of its answers."""
    if n_distractors < 1:
        raise ValueError(f"the number of distractors must be at least 1, got {n_distractors}")
    pool: list[Passage] = []
    seen: set[str] = set()
    for task in tasks:
        for p in task.passages:
            if p.gold and p.text not in seen:
                seen.add(p.text)
                pool.append(Passage(p.text, p.title, False))
    if len(pool) <= n_distractors:
        raise ValueError(f"only {len(pool)} passages to draw {n_distractors} distractors from")
    relevance = Relevance(pool)
    out = []
    for task in tasks[:limit]:
        own = {p.text for p in task.passages if p.gold}
        chosen: list[Passage] = []
        for i in relevance.ranked(task.question):
            p = pool[i]
            if p.text in own or holds_answer(p, task.answers):
                continue
            chosen.append(p)
            if len(chosen) == n_distractors:
                break
        gold = [p for p in task.passages if p.gold]
        meta = {**task.meta, "distractors": f"BM25 over other questions' passages ({n_distractors})"}
        out.append(
            Task(task.id, task.question, task.answers, (*gold, *chosen), task.kind, task.gold_sentences, meta)
        )
    return out


def litm_record(task: Task) -> dict:
    """A task in the "Lost in the Middle" QA format (its ctxs: gold first, then the distractors)."""
    return {
        "id": task.id,
        "question": task.question,
        "answers": list(task.answers),
        "ctxs": [
            {"title": p.title, "text": p.text, "isgold": p.gold, "hasanswer": p.gold} for p in task.passages
        ],
    }


def rr_squad_tasks(tasks: list[Task], n: int = 50, n_distractors: int = 600) -> list[Task]:
    """R&R's SQuAD set (R&R §4.1): "for each question Q, we take the accompanying context paragraph P to
    be the gold passage; if A is the Wikipedia article containing P, then we take the distracter
    paragraphs for Q to be paragraphs in SQuAD not contained in A", the document then built "just as
    for NQ", whose passages are "sorted by relevance".

    `tasks`: SQuAD questions read one task each, in file order, with their paragraph as the one gold
    passage and meta "article" and "paragraph" (their indices in the file). R&R takes 50 examples
    without saying which: these are the first question of a paragraph, article after article in file
    order (the first paragraph of each article, then the second of each, ...), so the n questions
    come from as many articles as there are. Each gets its gold paragraph, then the `n_distractors`
    paragraphs of the other articles most relevant to it (BM25) that hold none of its answers, most
    relevant first: 600 SQuAD paragraphs are about 85k tokens, enough for R&R's longest document (80k).
    """
    if n < 1 or n_distractors < 1:
        raise ValueError("the number of questions and of distractors must be at least 1")
    paragraphs: dict = {}  # paragraph index -> (article index, the paragraph as a distractor)
    firsts: dict = {}  # paragraph index -> its first question
    for t in tasks:
        article, paragraph = t.meta.get("article"), t.meta.get("paragraph")
        golds = [p for p in t.passages if p.gold]
        if article is None or paragraph is None or len(golds) != 1:
            raise ValueError(
                f"task {t.id!r} is not a SQuAD question (its article, paragraph and one gold "
                "passage): R&R's SQuAD set is built from the SQuAD file"
            )
        paragraphs.setdefault(paragraph, (article, Passage(golds[0].text, golds[0].title, False)))
        firsts.setdefault(paragraph, t)
    by_article: dict = {}
    for t in firsts.values():
        by_article.setdefault(t.meta["article"], []).append(t)
    chosen: list[Task] = []
    depth = 0
    while len(chosen) < n and any(depth < len(v) for v in by_article.values()):
        chosen.extend(v[depth] for v in by_article.values() if depth < len(v))
        depth += 1
    keys = list(paragraphs)
    pool = [paragraphs[k][1] for k in keys]
    articles = [paragraphs[k][0] for k in keys]
    relevance = Relevance(pool)
    out = []
    for t in chosen[:n]:
        picked: list[Passage] = []
        for i in relevance.ranked(t.question):
            if articles[i] == t.meta["article"] or holds_answer(pool[i], t.answers):
                continue
            picked.append(pool[i])
            if len(picked) == n_distractors:
                break
        gold = next(p for p in t.passages if p.gold)
        meta = {**t.meta, "distractors": f"BM25 over other articles' paragraphs ({len(picked)})"}
        out.append(Task(t.id, t.question, t.answers, (gold, *picked), t.kind, t.gold_sentences, meta))
    return out
