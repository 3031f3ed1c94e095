"""The built-in haystack: plain English prose written for LITM Explorer (components/data/haystack.txt).

ALR2 App. B.1 and RULER use Paul Graham essays as the needle-in-a-haystack filler; we ship our
own text instead, so the project carries no third-party prose. Paragraphs are separated by blank lines.
"""

from __future__ import annotations

from functools import lru_cache

from components.core.documents import split_paragraphs
from components.core.resources import package_path
from components.tasks.model import Passage

DATA = package_path("data")
HAYSTACK_PATH = DATA / "haystack.txt"


@lru_cache(maxsize=1)
def haystack_paragraphs() -> tuple[str, ...]:
    return tuple(split_paragraphs(HAYSTACK_PATH.read_text(encoding="utf-8")))


def haystack_passages() -> list[Passage]:
    return [Passage(t) for t in haystack_paragraphs()]
