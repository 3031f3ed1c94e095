"""Sweep documents: a task's gold passage(s) placed among distractors at a chosen length and position.

R&R §4.1: "given positive integers x <= d: (1) each passage is enclosed in PAGE tags ...;
(2) the gold passage appears approximately x GPT4-tokens into the document; and (3) the document is
approximately d GPT4-tokens long. The distracter passages ... are still sorted by relevance."
So: the task's own distractors keep their given order (NQ's are ranked by relevance), distractors from
a pool (other questions' passages) follow them sorted by BM25 relevance to the question, the gold page
goes at the page boundary nearest x tokens, and distractors are taken while the document stays within d
tokens (it ends at most one page short of d, never past it). Pages are never split. d and x count the
document as R&R's prompt holds it: each page in its PAGE tags, a blank line between two (core.tagged),
the instructions and reminders around and between them not; `Built.length_tokens` and `position_tokens`
are on that count.

For several gold passages (R&R §4.1 HotPotQA) the gold pages go "at regularly spaced intervals".
"Lost in the Middle" (LITM §3.1) places the gold document at index i among N documents instead:
`build_by_index`.

Each passage's tokens are counted once (a cache keyed by encoding and text, filled in one batch with
`count_many`); every position then comes from prefix sums (components.core.positions), so a whole grid
of (length, position) documents is built without re-tokenising any text.
"""

from __future__ import annotations

import functools
import math
import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate

import numpy as np

from components.core.cells import Cell
from components.core.documents import Document, make_document, neutralise_tags
from components.core.positions import nearest_boundary
from components.core.tagged import counter, tagged_length, tagged_offsets
from components.core.tokens import DEFAULT_ENCODING, tokenizer
from components.tasks.distractors import Relevance
from components.tasks.model import Passage, Task

_COUNTS: dict[str, dict[str, int]] = {}
_MAX_CACHED = 500_000
HAYSTACK_REPEATS = 8


class TooFewPassages(ValueError):
    """The task (and its pool) holds too little distractor text for the document asked for."""


@dataclass(frozen=True)
class Built:
    """A built document with what was asked for and what was built.

    unit "tokens" (build_document): lengths and positions are tokens of the document as R&R's prompt
    holds it (its pages in their PAGE tags: core.tagged); actual_position is the number of those tokens
    before the first gold page. unit "documents" (build_by_index): requested/actual length is the number
    of documents and requested/actual position the 0-based gold index; the token figures are then
    `length_tokens` and `position_tokens`, of the pages' text alone.
    """

    document: Document
    requested_length: int
    requested_position: int | None  # None: gold pages spread at regular intervals
    actual_length: int
    actual_position: int
    gold_pages: tuple[int, ...]  # 1-based page numbers
    gold_index: int  # 0-based index of the first gold page
    unit: str = "tokens"

    @property
    def offsets(self) -> tuple[int, ...]:
        """The token offsets of its pages: as R&R's prompt holds them (tags included) in a token cell, of
        the text alone in a documents cell (LITM's prompt writes no PAGE tags)."""
        doc = self.document
        return tagged_offsets(doc.pages, doc.encoding) if self.unit == "tokens" else doc.offsets

    @property
    def length_tokens(self) -> int:
        return self.offsets[-1]

    @property
    def position_tokens(self) -> int:
        return self.offsets[self.gold_pages[0] - 1] if self.gold_pages else 0

    def to_record(self, *, texts: bool = True) -> dict:
        """A JSON-ready record (used by `litm tasks build`)."""
        doc = self.document
        rec = {
            "task": doc.name,
            "unit": self.unit,
            "requested_length": self.requested_length,
            "requested_position": self.requested_position,
            "actual_length": self.actual_length,
            "actual_position": self.actual_position,
            "length_tokens": self.length_tokens,
            "position_tokens": self.position_tokens,
            "gold_pages": list(self.gold_pages),
            "gold_index": self.gold_index,
            "gold_token_positions": [self.offsets[g - 1] for g in self.gold_pages],
            "n_pages": len(doc.pages),
            "encoding": doc.encoding,
        }
        if texts:
            rec["pages"] = [
                {"number": p.number, "title": p.title, "text": p.text, "tokens": p.tokens} for p in doc.pages
            ]
        return rec


@functools.lru_cache(maxsize=1 << 16)
def _clean(text: str) -> str:
    # what make_document stores (and counts), so counts passed through `counts=` match the page text
    return neutralise_tags(text)


def count_passages(texts: list[str], encoding: str = DEFAULT_ENCODING) -> list[int]:
    """Token counts of cleaned passage texts, each distinct text counted once per process."""
    cache = _COUNTS.setdefault(encoding, {})
    missing = list(dict.fromkeys(t for t in texts if t not in cache))
    if missing:
        if len(cache) + len(missing) > _MAX_CACHED:
            cache.clear()
        for t, n in zip(missing, tokenizer(encoding).count_many(missing), strict=True):
            cache[t] = n
    return [cache[t] for t in texts]


def _counts_until(passages: list[Passage], reach: float, encoding: str) -> list[int]:
    """Token counts of the shortest prefix of `passages` whose total passes `reach` (all of them when
    none does). A sweep's shared pool holds thousands of passages and a document takes the first few:
    the boundaries build_document picks (the first prefix sum at or past its target) are all in it."""
    out: list[int] = []
    total, i, step = 0, 0, 16
    while i < len(passages):
        for n in count_passages([_clean(p.text) for p in passages[i : i + step]], encoding):
            out.append(n)
            total += n
            if total > reach:
                return out
        i, step = i + step, step * 2
    return out


def _looked_for(answers) -> list[str]:
    """The answers a distractor must not mention, white space collapsed; shorter than 3 characters are
    left out ("4" or "no" would knock out half a pool)."""
    return [a for a in (" ".join(str(x).split()) for x in answers) if len(a) >= 3]


@functools.lru_cache(maxsize=4096)
def _mentions(answers: tuple[str, ...]):
    """The search of a passage for any of a task's answers (whole words, any case), compiled once per
    answer set (a task's trials at every length, position and strategy share it); None when no
    answer is long enough to look for."""
    alts = [re.escape(a) for a in _looked_for(answers)]
    if not alts:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(alts) + r")(?!\w)", re.IGNORECASE).search


# What Python's re matches case-insensitively to an ASCII letter besides its two cases (re docs,
# "re.IGNORECASE"): mapped before lower(), so an ASCII answer found by re is found in the lowered text too.
_ASCII_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


@dataclass(frozen=True)
class _Candidates:
    """A pool's distinct passages (cleaned texts; passages marked non-gold), computed once per pool,
    with their texts case-folded and joined by NUL, so a task's answers are looked for with one
    str.find scan per answer instead of one regex search per passage."""

    texts: tuple[str, ...]
    passages: tuple[Passage, ...]
    index: dict  # cleaned text -> position
    folded: str
    starts: tuple[int, ...]  # where each folded text begins in `folded`
    n_pool: int  # the first n_pool candidates come from the pool, the rest from the built-in haystack

    @classmethod
    def of(cls, pairs: list[tuple[str, Passage]], n_pool: int | None = None) -> _Candidates:
        texts = tuple(t for t, _ in pairs)
        folded = [t.translate(_ASCII_FOLD).lower() for t in texts]
        starts = tuple(accumulate((len(t) + 1 for t in folded[:-1]), initial=0))
        return cls(
            texts,
            tuple(p if not p.gold else Passage(p.text, p.title, False) for _, p in pairs),
            {t: i for i, t in enumerate(texts)},
            "\x00".join(folded),
            starts,
            len(texts) if n_pool is None else n_pool,
        )

    @functools.cached_property
    def relevance(self) -> Relevance:
        """BM25 over the pool's candidates (built on first use, once per pool)."""
        return Relevance(self.passages[: self.n_pool])

    def ranked(self, question: str) -> list[int]:
        """Every candidate's position: the pool's by BM25 relevance to the question, most relevant first
        (R&R §4.1: "the distracter passages in the constructed document are still sorted by
        relevance"), then the haystack's in its own order (a running text, kept in order)."""
        return self._order(question).tolist()

    def _order(self, question: str) -> np.ndarray:
        return np.concatenate([self.relevance.order(question), np.arange(self.n_pool, len(self.texts))])

    @functools.cached_property
    def _table(self) -> np.ndarray:
        """The passages as an array of objects, so a ranking picks them out in one step."""
        table = np.empty(len(self.passages), dtype=object)
        for i, p in enumerate(self.passages):
            table[i] = p
        return table

    def kept(self, question: str, excluded: set[int]) -> list[Passage]:
        """The passages in ranked order, without those at the `excluded` positions: what
        `[passages[i] for i in ranked(question) if i not in excluded]` gives, without a Python loop over
        a pool of thousands for every trial."""
        order = self._order(question)
        if excluded:
            keep = np.ones(len(self.texts), dtype=bool)
            keep[list(excluded)] = False
            order = order[keep[order]]
        return self._table[order].tolist()

    def suspects(self, answers) -> range | set[int]:
        """Positions of passages that may mention an answer: every passage holding an ASCII answer's
        letters in any case (a superset of what the answer regex matches), all of them otherwise."""
        needles = [n.lower() for n in _looked_for(answers)]  # the answers _mentions searches for
        if not all(n.isascii() for n in needles):
            return range(len(self.texts))
        found = set()
        for n in needles:
            at = self.folded.find(n)
            while at >= 0:
                found.add(bisect_right(self.starts, at) - 1)
                at = self.folded.find(n, at + 1)
        return found


_CANDIDATES: dict = {}  # (id of the pool list, with haystack) -> (the pool list, its _Candidates)


def _candidates(pool: list[Passage] | None, hay: list[Passage]) -> _Candidates:
    """The pool's candidates, computed once per pool list (a sweep passes the same list every trial)."""
    key = (id(pool), bool(hay))
    hit = _CANDIDATES.get(key)
    if hit is None or hit[0] is not pool:
        if len(_CANDIDATES) > 8:
            _CANDIDATES.clear()
        pooled = _distinct(list(pool or []))
        seen = {t for t, _ in pooled}
        hit = _CANDIDATES[key] = (
            pool,
            _Candidates.of(pooled + [(t, p) for t, p in _distinct(list(hay)) if t not in seen], len(pooled)),
        )
    return hit[1]


def _distinct(passages: list[Passage]) -> list[tuple[str, Passage]]:
    """(cleaned text, passage) of each distinct non-empty text, first occurrence first."""
    out, seen = [], set()
    for p in passages:
        t = _clean(p.text)
        if t and t not in seen:
            seen.add(t)
            out.append((t, p))
    return out


def _pool_for(task: Task, pool: list[Passage] | None) -> list[Passage]:
    """Extra distractors: the given pool, sorted by BM25 relevance to the task's question (R&R §4.1),
    plus the built-in haystack for NIAH-style tasks, without the task's own passages and without
    passages that mention one of its answers (a distractor must not answer the question). A sweep passes the same pool list for every trial: its cleaned, distinct
    texts are computed once; per task, the answer regex runs only on passages a plain case-folded
    search says may hold an answer (the same passages come out)."""
    hay: list[Passage] = []
    if task.meta.get("haystack") == "builtin":
        from components.tasks.haystack import haystack_passages

        hay = haystack_passages()
    if not pool and not hay:
        return []
    cands = _candidates(pool, hay)
    excluded = {cands.index[t] for t in (_clean(p.text) for p in task.passages) if t in cands.index}
    # a suspect already left out (the task's own passages) needs no search: with none other, no regex
    # is compiled (a set of answers of its own per task, so the compiled ones are rarely met again)
    suspects = [i for i in cands.suspects(task.answers) if i not in excluded]
    mentions = _mentions(tuple(task.answers)) if suspects else None  # no suspect: no regex to compile
    if mentions is not None:
        excluded.update(i for i in suspects if mentions(cands.texts[i]))
    out = cands.kept(task.question, excluded)
    # RULER-style haystacks repeat their text when a long context is asked for (about 17k tokens per
    # round of ours): up to HAYSTACK_REPEATS more rounds, so NIAH sweeps reach 128k tokens.
    out.extend(Passage(p.text) for _ in range(HAYSTACK_REPEATS) for p in hay)
    return out


def shared_pool(tasks: list[Task]) -> list[Passage]:
    """Every distinct passage of a task set, marked non-gold: a fallback distractor pool (R&R §4.1
    SQuAD/PubMed take other questions' passages as distractors). build_document filters it per task."""
    out, seen = [], set()
    for task in tasks:
        for p in task.passages:
            t = _clean(p.text)
            if t and t not in seen:
                seen.add(t)
                out.append(Passage(p.text, p.title, False))
    return out


def _split(task: Task, pool: list[Passage] | None) -> tuple[list[Passage], list[Passage]]:
    golds = [p for p in task.passages if p.gold]
    if not golds:
        raise ValueError(f"task {task.id!r} has no gold passage")
    distractors = [p for p in task.passages if not p.gold] + _pool_for(task, pool)
    return golds, distractors


def _assemble(
    task, order: list[Passage], gold_flags: list[bool], counts: list[int], encoding: str
) -> Document:
    gold = [i + 1 for i, g in enumerate(gold_flags) if g]
    return make_document(
        [_clean(p.text) for p in order],
        titles=[p.title for p in order],
        gold=gold,
        encoding=encoding,
        name=task.id,
        counts=counts,
    )


def resolve_position(length: int, position: float | None) -> int | None:
    """position <= 1: a fraction of length; > 1: tokens. None stays None (regular spacing)."""
    if position is None:
        return None
    if isinstance(position, bool) or not math.isfinite(position) or position < 0:
        raise ValueError(
            f"answer position must be 0 or more (a fraction up to 1, or tokens), got {position!r}"
        )
    if position <= 1:
        return round(position * length)
    if round(position) > length:
        raise ValueError(
            f"answer position {position:g} (tokens) is past the end of a {length:,}-token document"
        )
    return round(position)


def build_document(
    task: Task,
    length: int,
    position: float | None,
    *,
    encoding: str = DEFAULT_ENCODING,
    pool: list[Passage] | None = None,
) -> Built:
    """A document of about `length` tokens, never more (unless the gold page(s) alone are longer),
    with the gold page at the boundary nearest `position`: tokens of the document as R&R's prompt holds it,
    each page in its PAGE tags with a blank line between two (R&R §4.1: core.tagged).

    position <= 1.0 is a fraction of length, > 1 is tokens (R&R §4.1: x tokens into the document).
    With several gold passages, the first goes at `position` and the rest at regular intervals
    after it; position None spreads them over the document at (i+1)/(m+1) of its length (R&R §4.1
    HotPotQA: "inserting the gold passages at regularly spaced intervals").
    Raises ValueError when the task (plus pool) has too little distractor text for `length`.
    """
    if isinstance(length, bool) or not isinstance(length, int | float) or length < 1:
        raise ValueError(f"document length must be a positive number of tokens, got {length!r}")
    length = int(length)
    x = resolve_position(length, position)
    golds, distractors = _split(task, pool)
    g_text = count_passages([_clean(p.text) for p in golds], encoding)
    budget_text = max(0, length - sum(g_text))
    d_text = _counts_until(distractors, budget_text, encoding)
    # R&R §4.1: a page counts with its PAGE tags and the blank line after it (core.tagged; the last page
    # has none). A page's number is not known before the gold page's place is: each is counted at the
    # largest number it can have, so the document built never passes `length` (the tags of pages 1-999
    # are the same size; a number past 999 takes a token more in each tag)
    tc = counter(encoding)
    m, most = len(golds), len(d_text) + len(golds)
    d_counts = [
        tc.page(_clean(p.text), n, j + 1 + m) + tc.sep
        for j, (p, n) in enumerate(zip(distractors[: len(d_text)], d_text, strict=True))
    ]
    g_counts = [tc.page(_clean(p.text), n, most) + tc.sep for p, n in zip(golds, g_text, strict=True)]
    gold_total = sum(g_counts)
    budget = max(0, length + tc.sep - gold_total)
    largest = max([*g_counts, *d_counts])

    # (3) fill to about `length` without passing it: the longest distractor prefix that, with the gold
    # page(s), stays within length. R&R's counts rest on it: a document of about d tokens that ran a
    # little over d would take one reminder or one small chunk more than its tables (Tables 1-3).
    # An answer position past what is left for the distractors (x close to d) puts the gold page(s) last.
    prefix = (0, *accumulate(d_counts))
    k = max(0, bisect_right(prefix, budget) - 1)
    # When _counts_until stopped early, prefix[k + 1] passed the target (a tagged page is longer than its
    # text), so prefix[k] >= budget - largest and this never raises, whatever the uncounted passages hold:
    # only a pool that ran out can refuse.
    if prefix[k] + gold_total - tc.sep < length - largest:
        raise TooFewPassages(
            f"task {task.id!r} has {prefix[-1] + gold_total - tc.sep:,} tokens of passages, too few for a "
            f"{length:,}-token document: choose a shorter length or a task set with more passages"
        )
    used = prefix[: k + 1]

    # (2) gold page(s) at the page boundary nearest the target (tokens before the page)
    if x is None:
        targets = [(i + 1) * length / (m + 1) for i in range(m)]
    else:
        step = (length - x) / m if m > 1 else 0
        targets = [x + i * step for i in range(m)]
    slots: list[int] = []
    before = 0  # gold tokens already placed before this one
    for i, t in enumerate(targets):
        j = nearest_boundary(used, max(0, t - before))
        if slots and j < slots[-1]:
            j = slots[-1]
        slots.append(j)
        before += g_counts[i]

    order: list[Passage] = []
    counts: list[int] = []
    flags: list[bool] = []
    gi = 0
    for j in range(k + 1):
        while gi < m and slots[gi] == j:
            order.append(golds[gi])
            counts.append(g_text[gi])
            flags.append(True)
            gi += 1
        if j < k:
            order.append(distractors[j])
            counts.append(d_text[j])
            flags.append(False)
    doc = _assemble(task, order, flags, counts, encoding)
    first = doc.gold[0]
    offsets = tagged_offsets(doc.pages, encoding)
    actual_position = offsets[first - 1]
    doc.meta.update(
        requested_length=length,
        requested_position=x,
        actual_length=offsets[-1],
        actual_position=actual_position,
        task=task.id,
        unit="tokens",
    )
    return Built(doc, length, x, offsets[-1], actual_position, tuple(doc.gold), first - 1, "tokens")


def build_by_index(
    task: Task,
    n_documents: int,
    gold_index: int,
    *,
    encoding: str = DEFAULT_ENCODING,
    pool: list[Passage] | None = None,
    file_index: int | None = None,
) -> Built:
    """ "Lost in the Middle" §3.1: N documents, the gold one at 0-based index `gold_index`, the
    distractors in their given order. Several gold passages go next to each other from that index.
    Lengths and positions are in documents (unit "documents"); token figures are on the Built.
    `file_index`, the task's position in its task file (file_position), goes to doc.meta: LITM's
    random-order prompt shuffles the distractors by it as the reference does (strategies.litm)."""
    if isinstance(n_documents, bool) or not isinstance(n_documents, int) or n_documents < 1:
        raise ValueError(f"number of documents must be a positive whole number, got {n_documents!r}")
    golds, distractors = _split(task, pool)
    m = len(golds)
    if n_documents < m:
        raise ValueError(f"task {task.id!r} has {m} gold passages; {n_documents} documents are too few")
    if (
        isinstance(gold_index, bool)
        or not isinstance(gold_index, int)
        or not 0 <= gold_index <= n_documents - m
    ):
        raise ValueError(f"gold index must be from 0 to {n_documents - m}, got {gold_index!r}")
    need = n_documents - m
    if len(distractors) < need:
        raise TooFewPassages(
            f"task {task.id!r} has {len(distractors)} distractors; {need} are needed for "
            f"{n_documents} documents: choose fewer documents or a task set with more passages"
        )
    chosen = distractors[:need]
    order = chosen[:gold_index] + golds + chosen[gold_index:]
    flags = [False] * gold_index + [True] * m + [False] * (need - gold_index)
    counts = count_passages([_clean(p.text) for p in order], encoding)
    doc = _assemble(task, order, flags, counts, encoding)
    doc.meta.update(
        requested_length=n_documents,
        requested_position=gold_index,
        actual_length=n_documents,
        actual_position=gold_index,
        task=task.id,
        unit="documents",
        tokens=doc.tokens,
        position_tokens=doc.offsets[gold_index],
    )
    if file_index is not None:
        doc.meta["file_index"] = file_index
    return Built(
        doc, n_documents, gold_index, n_documents, gold_index, tuple(doc.gold), gold_index, "documents"
    )


_POOLS: list[tuple[list, list]] = []  # (tasks, their shared distractor pool), most recent last


def cell_document(
    task: Task, cell: Cell, *, encoding: str = DEFAULT_ENCODING, tasks: list[Task] | None = None
) -> Built:
    """The document a sweep builds for this task and cell: build_by_index (documents, LITM §3.1) or
    build_document (tokens, R&R §4.1). The plan, `litm prompt`, the Playground and the live scorer all
    build a cell's document here, so each shows exactly what a sweep sends. `tasks` is the whole task
    set, in file order: the task's place in it goes to the document (file_position), and when the task
    has too few passages of its own, the other tasks' passages are the distractor pool (R&R §4.1 takes
    other questions' passages)."""

    def build(pool=None):
        if cell.by_documents:
            return build_by_index(
                task,
                cell.documents,
                cell.gold_index,
                encoding=encoding,
                pool=pool,
                file_index=file_position(task, tasks),
            )
        return build_document(task, cell.length, cell.position, encoding=encoding, pool=pool)

    try:
        return build()
    except TooFewPassages:
        if tasks is None:
            raise
    pool = next((p for t, p in _POOLS if t is tasks), None)
    if pool is None:
        pool = shared_pool(tasks)
        _POOLS[:] = [*_POOLS[-3:], (tasks, pool)]
    return build(pool)


def task_document(task: Task, encoding: str = DEFAULT_ENCODING, file_index: int | None = None) -> Document:
    """The task's passages as given, one page each, gold pages marked (`file_index`: as build_by_index)."""
    if not task.passages:
        raise ValueError(f"task {task.id!r} has no passages")
    texts = [_clean(p.text) for p in task.passages]
    doc = make_document(
        texts,
        titles=[p.title for p in task.passages],
        gold=task.gold_pages,
        encoding=encoding,
        name=task.id,
        counts=count_passages(texts, encoding),
    )
    doc.meta.update(task=task.id, unit="given")
    if file_index is not None:
        doc.meta["file_index"] = file_index
    return doc


_POSITIONS: list = []  # [(task list, {task id: position})], the last few lists asked about


def file_position(task: Task, tasks: list[Task] | None) -> int | None:
    """The task's position (from 0) in `tasks`, the task set read from its file in file order; None
    when it is not in it. Task ids are unique within a set a sweep runs (run.plan refuses repeats)."""
    if not tasks:
        return None
    hit: dict[str, int] | None = next((pos for t, pos in _POSITIONS if t is tasks), None)
    if hit is None:
        hit = {}
        for n, t in enumerate(tasks):
            hit.setdefault(t.id, n)
        _POSITIONS[:] = [*_POSITIONS[-3:], (tasks, hit)]
    i = hit.get(task.id)
    if i is None or not (tasks[i] is task or tasks[i] == task):
        return None
    return i


def as_task(doc: Document, question: str = "", answers: tuple[str, ...] = ()) -> Task:
    """A document of the user's own as a task: its pages in order, its gold pages marked."""
    gold = set(doc.gold)
    passages = tuple(Passage(p.text, p.title, p.number in gold) for p in doc.pages)
    return Task(doc.name or "document", question, tuple(answers), passages)


def move_gold(doc: Document, position: float) -> Built:
    """The user's document with its gold page(s) moved to `position` (<= 1: a fraction of the
    document's tokens, > 1: tokens), the other pages kept in order: build_document with the
    document's own length, so every page stays (R&R §4.1). Raises ValueError without a gold page."""
    if not doc.gold:
        raise ValueError("mark a gold page first: there is no answer to move")
    return build_document(
        as_task(doc), tagged_length(doc.pages, doc.encoding), position, encoding=doc.encoding
    )
