"""Reading model output: the answer, page numbers, retrieved sentences and quotes.

Nothing here raises on any text: a failure is a Parsed value with ok=False and a reason.
The answer and page formats are ours (R&R App. A leaves {format_instructions} unspecified); see
strategies/templates/format_*.txt for the instructions that ask for them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_NUM_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}


@dataclass(frozen=True)
class Parsed:
    ok: bool
    answer: str = ""
    pages: tuple[int, ...] = ()
    sentences: tuple[str, ...] = ()
    dropped: tuple[int, ...] = ()  # page numbers out of range, dropped
    error: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)


def _strip_fences(text: str) -> str:
    t = text.strip()
    m = re.match(r"^```[a-zA-Z]*\s*\n(.*?)\n?```\s*$", t, re.S)
    return m.group(1).strip() if m else t


def _json_obj(text: str):
    t = _strip_fences(text)
    for candidate in (t, *re.findall(r"\{.*\}|\[.*\]", t, re.S)):
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):
            continue
    return None


def _field(text: str, name: str) -> str | None:
    """Value after 'Name:' (case-insensitive, optional markdown bold), up to the end of its line."""
    m = re.search(rf"(?im)^[\s>*_#-]*\**{name}\**\s*[:：]\**\s*(.*)$", text)
    return m.group(1).strip() if m else None


def _clean_answer(a: str) -> str:
    a = a.strip().strip("*_` ").strip()
    if len(a) >= 2 and a[0] == a[-1] and a[0] in "\"'":
        a = a[1:-1].strip()
    return a


def page_numbers(text: str, n_pages: int | None = None) -> tuple[list[int], list[int]]:
    """Numbers in text, in order, without repeats; (kept, dropped as out of range)."""
    t = text.lower()
    for word, n in _NUM_WORDS.items():
        t = re.sub(rf"\bpage {word}\b", f"page {n}", t)
    nums: list[int] = []
    # ranges like "pages 3-5" or "3 to 5"
    for m in re.finditer(r"\d+\s*(?:-|–|to)\s*\d+|\d+", t):
        tok = m.group(0)
        r = re.match(r"(\d+)\s*(?:-|–|to)\s*(\d+)", tok)
        if r and 0 < int(r.group(2)) - int(r.group(1)) <= 20:
            nums.extend(range(int(r.group(1)), int(r.group(2)) + 1))
        elif r:
            nums.extend([int(r.group(1)), int(r.group(2))])
        else:
            nums.append(int(tok))
    kept: list[int] = []
    dropped: list[int] = []
    for n in nums:
        bucket = dropped if (n_pages is not None and not 1 <= n <= n_pages) or n < 1 else kept
        if n not in bucket:
            bucket.append(n)
    return kept, dropped


def parse_pages(text: str, n_pages: int | None = None, limit: int | None = None) -> Parsed:
    """ICR stage-1 output -> page numbers. Accepts JSON, 'Pages: 3, 7', lists and prose."""
    if not isinstance(text, str) or not text.strip():
        return Parsed(False, error="empty response")
    obj = _json_obj(text)
    source = None
    if isinstance(obj, dict):
        for key in ("pages", "page_numbers", "page", "ids"):
            if key in obj:
                source = json.dumps(obj[key])
                break
    elif isinstance(obj, list):
        source = json.dumps(obj)
    if source is None:
        source = _field(text, "pages?") or text
    kept, dropped = page_numbers(source, n_pages)
    if limit is not None:
        kept = kept[:limit]
    if not kept:
        why = f"page numbers {dropped} are outside 1..{n_pages}" if dropped else "no page numbers found"
        return Parsed(False, dropped=tuple(dropped), error=why)
    return Parsed(True, pages=tuple(kept), dropped=tuple(dropped))


def parse_answer(text: str, n_pages: int | None = None) -> Parsed:
    """'Answer: ... / Page: N' (ours), JSON {"answer", "page"}, or else the first non-empty line."""
    if not isinstance(text, str) or not text.strip():
        return Parsed(False, error="empty response")
    obj = _json_obj(text)
    if isinstance(obj, dict) and "answer" in obj:
        answer = _clean_answer(str(obj.get("answer") or ""))
        pages, dropped = page_numbers(json.dumps(obj.get("page", obj.get("pages", ""))), n_pages)
        if answer:
            return Parsed(True, answer=answer, pages=tuple(pages), dropped=tuple(dropped))
    field_answer = _field(text, "answer")
    page_field = _field(text, "pages?")
    pages, dropped = page_numbers(page_field, n_pages) if page_field else ([], [])
    if field_answer:
        return Parsed(True, answer=_clean_answer(field_answer), pages=tuple(pages), dropped=tuple(dropped))
    if field_answer is not None:  # "Answer:" followed by the answer on the next line
        after = re.split(r"(?i)answer\**\s*[:：]", text, maxsplit=1)[1]
        for line in after.splitlines():
            if line.strip() and not re.match(r"(?i)\s*\**pages?\**\s*:", line):
                return Parsed(True, answer=_clean_answer(line), pages=tuple(pages), dropped=tuple(dropped))
    for line in _strip_fences(text).splitlines():
        if line.strip() and not re.match(r"(?i)\s*\**pages?\**\s*:", line):
            return Parsed(
                True,
                answer=_clean_answer(line),
                pages=tuple(pages),
                dropped=tuple(dropped),
                extra={"format": "first line"},
            )
    return Parsed(False, pages=tuple(pages), error="no answer found")


def first_line(text: str) -> str:
    """LITM's metric reads the prediction up to its first newline (after leading whitespace)."""
    return (text or "").strip().split("\n")[0].strip()


def parse_sentences(text: str) -> Parsed:
    """Bulleted retrieved sentences (ALR2 Fig. 3: 'start from the bullet symbol -')."""
    if not isinstance(text, str) or not text.strip():
        return Parsed(False, error="empty response")
    items = []
    for line in text.splitlines():
        m = re.match(r"^\s*(?:[-*•]|\d+[.)])\s+(.*\S)\s*$", line)
        if m:
            items.append(m.group(1).strip().strip('"“”'))
    if not items:
        return Parsed(False, error="no bulleted sentences found")
    return Parsed(True, sentences=tuple(items))


def parse_quotes_and_answer(text: str) -> Parsed:
    """ALR2 Fig. 5: 'Relevant quotes: [1] "..." ... Answer: ...'."""
    if not isinstance(text, str) or not text.strip():
        return Parsed(False, error="empty response")
    m = re.search(r"(?i)answer\s*:", text)
    head, tail = (text[: m.start()], text[m.end() :]) if m else (text, "")
    quotes = tuple(q.strip() for q in re.findall(r"[\"“]([^\"”]{3,})[\"”]", head))
    if not tail.strip():
        return Parsed(False, sentences=quotes, error="no 'Answer:' found")
    answer = re.sub(r"\s*\[\d+\]\s*\.?\s*$", "", first_line(tail)).strip()
    return Parsed(
        bool(answer), answer=_clean_answer(answer), sentences=quotes, error="" if answer else "empty answer"
    )
