"""Prompt building for an R&R grid (R&R §4.1: answer position x 0-80k in 10k steps, d = 80k) against
plain tiktoken encoding of the same text. Pages are counted once, in a shared pool, and prompts are
assembled from those counts, so building should cost less than tokenising what it builds (goal < 1).

Synthetic and deterministic: 600 distinct pool passages of ~150 tokens, 50 tasks, 9 positions.
"""

from __future__ import annotations

import random
import time

from components.core.documents import Document, Page
from components.core.positions import nearest_boundary
from components.core.tokens import tokenizer
from components.strategies import get_strategy

POOL = 600
TASKS = 50
LENGTH = 80_000
POSITIONS = tuple(range(0, LENGTH + 1, 10_000))  # 9 positions

_WORDS = """time year people way day man thing woman life child world school state family student
group country problem hand part place case week company system program question work government
number night point home water room mother area money story fact month lot right study book eye job
word business issue side kind head house service friend father power hour game line end member law
car city community name president team minute idea kid body information back parent face others
level office door health person art war history party result change morning reason research girl
guy moment air teacher force education river mountain harbour village engine letter garden market
bridge island valley forest museum library castle railway canal tower festival council treaty
""".split()


def passage(rng: random.Random, i: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(136)]
    sentences = [" ".join(words[j : j + 13]).capitalize() + "." for j in range(0, len(words), 13)]
    return f"Record {i}: " + " ".join(sentences)


def make_grid():
    """(pool texts, their counts, tasks as (question, gold text, distractor order))."""
    rng = random.Random(2024)
    texts = [passage(rng, i) for i in range(POOL)]
    tok = tokenizer("cl100k_base")
    counts = tok.count_many(texts)
    golds = [f"Fact {t}: the secret code of item {t} is {rng.randrange(10**6):06d}." for t in range(TASKS)]
    gold_counts = tok.count_many(golds)
    tasks = []
    for t in range(TASKS):
        order = list(range(POOL))
        rng.shuffle(order)
        tasks.append((f"What is the secret code of item {t}?", golds[t], gold_counts[t], order))
    return texts, counts, tasks


def document(texts, counts, gold_text, gold_tokens, order, position) -> Document:
    """Distractors in the task's order up to ~LENGTH tokens, the gold page at the boundary nearest
    `position` (DESIGN: building sweep documents); counts come from the pool, never re-tokenised."""
    chosen, total = [], 0
    for i in order:
        if total >= LENGTH - gold_tokens:
            break
        chosen.append(i)
        total += counts[i]
    offsets = [0]
    for i in chosen:
        offsets.append(offsets[-1] + counts[i])
    at = nearest_boundary(offsets, position)
    items = [(texts[i], counts[i]) for i in chosen]
    items.insert(at, (gold_text, gold_tokens))
    pages = tuple(Page(n, text, c) for n, (text, c) in enumerate(items, start=1))
    return Document(pages, (at + 1,))


def run() -> list[str]:
    texts, counts, tasks = make_grid()
    rr = get_strategy("rr")
    enc = tokenizer("cl100k_base")._enc
    build_s = encode_s = 0.0
    n_prompts = n_tokens = n_encoded = 0
    for question, gold, gold_tokens, order in tasks:
        for x in POSITIONS:
            doc = document(texts, counts, gold, gold_tokens, order, x)
            t0 = time.perf_counter()
            prompts = rr.first_prompts(doc, question, None)
            t1 = time.perf_counter()
            for p in prompts:
                n_encoded += len(enc.encode(p.text, disallowed_special=()))
            t2 = time.perf_counter()
            build_s += t1 - t0
            encode_s += t2 - t1
            n_prompts += len(prompts)
            n_tokens += sum(p.tokens for p in prompts)
    return [
        f"prompts: {n_prompts} prompts, {n_tokens / 1e6:.1f}M tokens built in {build_s:.2f} s; "
        f"tiktoken encode of the same text: {encode_s:.2f} s; ratio X/Y = {build_s / encode_s:.2f} (goal < 1)",
        f"token count from prefix sums vs encoding the prompts: {n_tokens:,} vs {n_encoded:,} "
        f"({(n_tokens - n_encoded) / n_encoded:+.4%})",
    ]


if __name__ == "__main__":
    for line in run():
        print(line)
