"""Token positions from prefix sums: nearest page boundaries, reminder points, chunk splits; the
few places a "mini U-curve" visits; retrieved pages that are just the first ones.

`offsets` is Document.offsets: offsets[i] is the number of tokens before page i+1, so boundary i
(0..N) lies between page i and page i+1 (0 = before the first page, N = after the last).
"""

from __future__ import annotations

from bisect import bisect_left


def nearest_boundary(
    offsets: tuple[int, ...] | list[int], x: float, lo: int = 0, hi: int | None = None
) -> int:
    """Index of the page boundary whose token position is nearest to x (ties go to the earlier)."""
    hi = len(offsets) - 1 if hi is None else hi
    i = bisect_left(offsets, x, lo, hi + 1)
    if i > hi:
        return hi
    if i > lo and x - offsets[i - 1] <= offsets[i] - x:
        return i - 1
    return i


def every(offsets, step: int) -> list[int]:
    """Inner boundaries nearest to step, 2*step, ..., without repeats, each leaving at least half a
    step of text after it.

    R&R §3.2: reminders go "approximately every r tokens in the document, outside the PAGE blocks";
    §3.4: chunks are split "outside the PAGE blocks". A point closer than half a step to the end would
    make a last stretch much shorter than the others (a reminder just before the closing instructions,
    a small tail chunk): it is left out and that stretch joins the one before. So a document of about
    d tokens gets d/r - 1 reminders and d/c chunks whether it ends a little before or after d: at
    r = 10k, none at d = 10k (Table 1 omits Reprompt at 10k: "reprompting is not done at this
    length"), 1/3/7 at 20k/40k/80k; at d = 80k, c = 10k/20k/40k/80k gives 8/4/2/1 chunks, so
    m = d/c + 1 calls with the answer call (Table 3: 9/5/3/2); and a chunk of about r tokens gets no
    reminder (Table 2 omits chunked R&R at c = 10k).
    """
    if step < 1:
        raise ValueError("step must be positive")
    total = offsets[-1]
    last = len(offsets) - 1
    out: list[int] = []
    if last < 2:
        return out
    m = 1
    while m * step < total:
        i = nearest_boundary(offsets, m * step, 1, last - 1)
        if 2 * (total - offsets[i]) < step:
            break  # this and every later point leave less than half a step after them
        if not out or out[-1] != i:
            out.append(i)
        m += 1
    return out


def chunk_ranges(offsets, size: int) -> list[tuple[int, int]]:
    """[(first page index, end page index exclusive), ...] for chunks of about `size` tokens cut
    between pages (R&R §3.4); a tail shorter than half a chunk joins the previous chunk, and a
    document no longer than `size` (or about as long) is one chunk."""
    cuts = [0, *every(offsets, size), len(offsets) - 1]
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


FIVE_POSITIONS = (0.0, 0.25, 0.5, 0.75, 1.0)  # start, quarter, middle, three quarters, end


def spread_indices(n_documents: int, k: int = 5) -> list[int]:
    """k gold indices from the first to the last of N documents, evenly spread and rounded down,
    without repeats: for 20 documents 0, 4, 9, 14, 19, the indices LITM Table 5 / Fig. 5 report."""
    if n_documents < 1:
        return []
    if n_documents == 1 or k <= 1:
        return [0]
    return sorted({int(i * (n_documents - 1) / (k - 1)) for i in range(k)})


def first_pages(retrieved, k: int | None = None) -> bool:
    """True when the retrieved pages are exactly pages 1, 2, ..., m in that order (m >= 2; m == k
    when k is given): what a weak model answers to ICR stage 1 whatever the question, so such a
    "hit" says nothing about retrieval and is counted apart."""
    pages = list(retrieved or ())
    if len(pages) < 2 or (k is not None and len(pages) != k):
        return False
    return pages == list(range(1, len(pages) + 1))
