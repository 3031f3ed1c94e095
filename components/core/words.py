"""Numbers in words: THE plural rule of every sentence the app and `litm` say ('1 run', '3 runs')."""

from __future__ import annotations


def count(n: int, word: str, many: str | None = None) -> str:
    """'1 page', '3 pages', '1,200 trials': a number and its word in the right number (`many` where the
    plural is not the word with an s: 'reply', 'replies')."""
    return f"{int(n):,} {word if int(n) == 1 else many or word + 's'}"
