"""A scripted provider for tests and demos, and a deterministic "plausible reader" of our prompts.

FakeProvider answers, in order of preference: the next enqueued item (text, a Completion, or an
exception to raise), the responder callable `responder(messages, settings) -> str`, or
`plausible_answer(prompt)`. Every request is kept in `history`.

`plausible_answer` reads the pages of an R&R or "Lost in the Middle" prompt and answers from the
page that shares most words with the question ("Answer: ...\nPage: N"), or lists such pages for a
retrieval prompt ("Pages: 3, 7"). With `middle_loss` > 0 it misses gold pages near the middle of long
documents (deterministically, by a hash of the prompt), so sweeps against it draw a U-curve. To our
judge's prompt (core.judge) it answers CORRECT when the model's answer holds a reference, else INCORRECT.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque

from components.core.completion import Completion
from components.providers.base import ModelSpec, Settings
from components.providers.guard import check_fits

_STOP = set(
    "a an the of in on at to is are was were be by for and or what which who whom whose when where "
    "why how did does do this that with from as it its into than then document page pages question "
    "answer following based".split()
)
_PAGE_RE = re.compile(r"<PAGE (\d+)>\n(.*?)\n</PAGE \1>", re.S)
_LITM_RE = re.compile(r"^Document \[(\d+)\]\(Title: [^)]*\) (.*)$", re.M)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _question(text: str) -> str:
    m = list(re.finditer(r"(?m)^Question: (.*)$", text))
    if m:
        return m[-1].group(1)
    lines = text.splitlines()
    found = ""
    for i, line in enumerate(lines[:-1]):
        if re.search(r"question", line, re.I) and re.search(r"[:.]\s*$", line) and lines[i + 1].strip():
            found = lines[i + 1]
    return found


def _miss(text: str, index: int, n: int, middle_loss: float) -> bool:
    if middle_loss <= 0 or n < 5:
        return False
    x = index / (n - 1)
    p = middle_loss * (1 - abs(2 * x - 1)) * min(1.0, n / 20)
    h = int(hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return h < p


def plausible_answer(text: str, middle_loss: float = 0.0) -> str:
    """A deterministic, plausible reply to one of our prompts (see the module docstring)."""
    judged = _judge_reply(text)
    if judged is not None:
        return judged
    kv = re.search(r'Key: "([^"]*)"\nCorresponding value:\s*$', text)
    if kv:
        m = re.search(r'"' + re.escape(kv.group(1)) + r'": "([^"]*)"', text)
        return m.group(1) if m else "unknown"
    pages = [(int(n), body) for n, body in _PAGE_RE.findall(text)] or [
        (int(n), body) for n, body in _LITM_RE.findall(text)
    ]
    q = {w for w in words(_question(text)) if w not in _STOP}
    scored = sorted(((len(q & set(words(body))), -i, n) for i, (n, body) in enumerate(pages)), reverse=True)
    ranked = [(s, n) for s, _, n in scored if s > 0]
    if ranked and _miss(text, [n for n, _ in pages].index(ranked[0][1]), len(pages), middle_loss):
        ranked = ranked[1:] or [(0, pages[0][0])]
    if "page numbers" in text.lower():
        return _pages_reply(text, ranked, pages)
    if not ranked:
        reply = "I don't know"
        return f"Answer: {reply}\nPage: {pages[0][0]}" if pages else reply
    best = ranked[0][1]
    reply = _reply(dict(pages)[best], q)
    if text.rstrip().endswith("Answer:"):
        return reply
    return f"Answer: {reply}\nPage: {best}"


_JUDGE_RE = re.compile(r"\nReference answers: (.*)\nModel's answer: (.*?)\n\nReply with one word", re.S)


def _judge_reply(text: str) -> str | None:
    """A judge's verdict on our judge prompt (strategies/templates/judge.txt): CORRECT when the model's
    answer holds one of the references (case aside), else INCORRECT; None for any other prompt."""
    m = _JUDGE_RE.search(text)
    if m is None:
        return None
    answer = m.group(2).lower()
    refs = re.findall(r'"([^"]*)"', m.group(1))
    return "CORRECT" if any(r.strip() and r.lower() in answer for r in refs) else "INCORRECT"


def _pages_reply(text: str, ranked: list, pages: list) -> str:
    """A retrieval stage's reply: the best-matching pages, as many as the prompt asks for (3 unless told)."""
    k = re.search(r"up to (\d+) page numbers", text)
    top = [n for _, n in ranked][: int(k.group(1)) if k else 3]
    return "Pages: " + ", ".join(str(n) for n in (top or [pages[0][0] if pages else 1]))


def _reply(body: str, q: set[str]) -> str:
    """The answer a page gives: the salient words (numbers, names) of its sentence nearest the question."""
    sentences = re.split(r"(?<=[.!?])\s+", body)
    sentence = max(sentences, key=lambda s: len(q & set(words(s))))
    tokens = re.findall(r"[A-Za-z0-9'-]+", sentence)
    rest = [(i, w) for i, w in enumerate(tokens) if w.lower() not in q and w.lower() not in _STOP]
    salient = [w for i, w in rest if w.isdigit() or (i > 0 and w[0].isupper())]
    return " ".join(salient[:4] or [w for _, w in rest][:6]) or sentence[:60]


class FakeProvider:
    def __init__(self, spec: ModelSpec | None = None, responder=None, middle_loss: float = 0.0):
        self.spec = spec or ModelSpec("fake", "fake")
        self.responder = responder
        self.middle_loss = middle_loss
        self.queue: deque = deque()
        self.history: list[dict] = []

    def enqueue(self, *items) -> FakeProvider:
        self.queue.extend(items)
        return self

    async def complete(self, messages: list[dict], settings: Settings) -> Completion:
        check_fits(self.spec, messages, settings)
        self.history.append({"messages": messages, "settings": settings})
        text = "\n".join(str(m.get("content", "")) for m in messages)
        if self.queue:
            item = self.queue.popleft()
        elif self.responder is not None:
            item = self.responder(messages, settings)
        else:
            item = plausible_answer(text, self.middle_loss)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, Completion):
            return item
        return Completion(
            str(item),
            approx_tokens(text),
            approx_tokens(str(item)),
            0.0,
            self.spec.model,
            finish_reason="stop",
        )

    async def score(self, messages: list[dict], answer: str):
        """A made-up, deterministic likelihood of `answer` (one 'token' per word): likelihood.fake_logprob."""
        from components.providers.likelihood import Scored, fake_logprob

        self.history.append({"messages": messages, "score": answer})
        text = "\n".join(str(m.get("content", "")) for m in messages)
        if self.queue and isinstance(self.queue[0], BaseException):
            raise self.queue.popleft()
        pieces = answer.split() or [answer]
        logprobs = tuple(fake_logprob(w, text + " ".join(pieces[:i])) for i, w in enumerate(pieces))
        return Scored(logprobs, approx_tokens(text), approx_tokens(text) + len(pieces), 0.0, self.spec.model)

    async def aclose(self) -> None:
        return None
