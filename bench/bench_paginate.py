"""Page splitting in linear time: one paragraph of 200 KB and of 400 KB split `by sentence`, and the ratio
of their times (linear ~2, quadratic ~4); then `tokens:1` on a 4 MB text, which stops at the page limit.

Synthetic and deterministic: sentences of 12 words with abbreviations (Dr., Mr., U.S.) that the sentence
splitter must not cut at.
"""

from __future__ import annotations

import random
import time

from components.core.documents import MAX_PAGES, TooManyPages, paginate

_WORDS = "the cat sat on a mat near Dr. Smith and Mr. Jones in the U.S. today while rain fell".split()


def paragraph(chars: int, seed: int = 7) -> str:
    """One paragraph (no blank line) of about `chars` characters of 12-word sentences."""
    rng = random.Random(seed)
    out, size = [], 0
    while size < chars:
        sentence = " ".join(rng.choice(_WORDS) for _ in range(12)).capitalize() + ". "
        out.append(sentence)
        size += len(sentence)
    return "".join(out)[:chars]


def timed(text: str, spec: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    try:
        doc = paginate(text, spec)
        outcome = f"{len(doc.pages):,} pages"
    except TooManyPages:
        outcome = f"refused (more than {MAX_PAGES:,} pages)"
    return time.perf_counter() - t0, outcome


def run(sizes: tuple[int, int] = (200_000, 400_000)) -> list[str]:
    small, large = sizes
    lines = []
    t_small, pages_small = timed(paragraph(small), "sentence")
    t_large, pages_large = timed(paragraph(large), "sentence")
    lines.append(f"by sentence, one paragraph of {small // 1000} KB: {t_small:.2f} s ({pages_small})")
    lines.append(f"by sentence, one paragraph of {large // 1000} KB: {t_large:.2f} s ({pages_large})")
    lines.append(
        f"ratio {large // 1000} KB / {small // 1000} KB: {t_large / t_small:.2f} (linear ~2, quadratic ~4)"
    )
    t_tok, outcome = timed(paragraph(4_000_000), "tokens:1")
    lines.append(f"tokens:1 on 4 MB: {t_tok:.2f} s, {outcome}")
    return lines


if __name__ == "__main__":
    for line in run():
        print(line)
