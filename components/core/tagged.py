"""R&R's document length d: a document's tokens as R&R's prompt holds it, PAGE tags included.

R&R §4.1 builds "the document D for each question as a double-linebreak-separated list of the provided
passages, such that ... (1) Each passage is enclosed in <PAGE {p}> ... </PAGE {p}> tags ...; (2) The
gold passage appears approximately x GPT4-tokens into the document; and (3) The document is approximately
d GPT4-tokens long." So d and x count the pages as the prompt writes them, each in its tags
(documents.PAGE_TAGS) with a blank line between two (documents.PAGE_SEP), and not the instructions around
the document nor the reminders between its pages. A page's text is counted once (Page.tokens, when the
document is made); the tags' and the blank lines' tokens are added here, with the tokeniser's merges
where two pieces meet corrected as the prompt builder corrects them (prompts.Seams), so these offsets are
the pages' token offsets in the prompt (bench/bench_prompts.py measures the builder against encoding the
whole prompt).

`tagged_offsets(pages, encoding)`: offsets[i] is the number of tokens before page i+1's opening tag (the
blank line before it included), offsets[-1] the whole list's: what R&R's reminders (every r tokens) and
chunks (about c tokens) are placed on, and what a sweep fills to d and places the answer x into
(tasks.sweepdocs.build_document).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from components.core.documents import PAGE_SEP, PAGE_TAGS, Page
from components.core.prompts import PromptBuilder, seams
from components.core.tokens import tokenizer


class TagCounter:
    """The tokens of a page in its tags (`page`) and of the blank line between two tagged pages (`sep`), for
    one encoding: the page's stored count plus the tags', corrected at their seams as PromptBuilder.add_page
    counts them (joined_count)."""

    def __init__(self, encoding: str):
        self.sm = seams(encoding)
        self.count = tokenizer(encoding).count
        self._tags: dict[int, tuple[int, str, str]] = {}
        head, tail = PAGE_TAGS.split("{text}")
        self.head, self.tail = head, tail
        # the blank line between two tagged pages, with the merges at its two seams: measured once on the
        # builder itself (its seams do not depend on the page numbers or texts: tags bound them)
        text = "Text of a page. " * 3
        one, two = (Page(n, text, self.count(text)) for n in (1, 2))
        b = PromptBuilder(encoding).add_page(one, False)
        before = b.toks
        b.add(PAGE_SEP).add_page(two, False)
        self.sep = b.toks - before - self.page(text, two.tokens, 2)

    def tags(self, number: int) -> tuple[int, str, str]:
        """(tokens of page `number`'s two tags, the opening tag's last pre-token, the closing tag's first)."""
        got = self._tags.get(number)
        if got is None:
            head, tail = self.head.format(p=number), self.tail.format(p=number)
            got = (self.count(head) + self.count(tail), self.sm.edges(head)[1], self.sm.edges(tail)[0])
            if len(self._tags) < 100_000:
                self._tags[number] = got
        return got

    def page(self, text: str, tokens: int, number: int) -> int:
        """Tokens of a page of `text` (`tokens` of its own) in the tags of page `number`."""
        got = self._tags.get(number)
        n, head_last, tail_first = got if got is not None else self.tags(number)
        if not text:
            return n
        return tokens + n + self.sm.around(head_last, text, tail_first)


@lru_cache(maxsize=8)
def counter(encoding: str) -> TagCounter:
    return TagCounter(encoding)


@lru_cache(maxsize=1024)
def _offsets(pages: tuple[Page, ...], encoding: str) -> tuple[int, ...]:
    tc = counter(encoding)
    out = [0]
    last = len(pages) - 1
    for i, page in enumerate(pages):
        out.append(out[-1] + tc.page(page.text, page.tokens, page.number) + (tc.sep if i < last else 0))
    return tuple(out)


def tagged_offsets(pages: Sequence[Page], encoding: str) -> tuple[int, ...]:
    """Prefix sums of the pages' tokens as R&R's prompt holds them (len = pages + 1): offsets[i] is the
    tokens before page i+1's opening tag, offsets[-1] the whole list's, R&R §4.1's d. Remembered for the
    last documents asked about (a sweep places reminders and chunks on the same document many times)."""
    return _offsets(tuple(pages), encoding)


def tagged_length(pages: Sequence[Page], encoding: str) -> int:
    """R&R §4.1's document length d: the pages' tokens in their tags, with the blank lines between them."""
    return tagged_offsets(pages, encoding)[-1]
