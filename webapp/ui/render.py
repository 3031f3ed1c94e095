"""Small render helpers shared by the pages.

Unexpected exceptions must never reach the browser as a
traceback. `app.py` already runs each page inside `guard()`; inside a page, wrap a section with
`with guard("loading the results"):` so that one failing section shows a short st.error line and
the rest of the page still renders. Expected errors (ParamError, DocumentError, ProviderError,
ValueError from the engine) are better caught where they happen and shown with `message()`.

All text that comes from a document or a model goes through `html.escape` before it reaches
st.html; never pass such text to st.markdown (markdown and LaTeX would interpret it).
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from webapp.services.engine import REGION_COLOURS as COLORS
from webapp.services.engine import REGION_LABELS as LABELS
from webapp.services.engine import Prompt, Recipe, prompts
from webapp.session import State

log = logging.getLogger("litm.webapp")
MAX_MESSAGE = 240


def short(error: BaseException | str, secrets: tuple[str, ...] = ()) -> str:
    """One line, at most MAX_MESSAGE characters, with any secret (an API key) blanked out."""
    text = str(error).strip()
    if not text and isinstance(error, BaseException):
        text = type(error).__name__
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "•••")
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    return line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 1] + "…"


def _secrets() -> tuple[str, ...]:
    try:
        return (State().api_key,)
    except Exception:  # no session (bare mode)
        return ()


@contextmanager
def guard(what: str = "this page") -> Iterator[None]:
    """Run a block; an unexpected exception becomes one short st.error line (no traceback).
    st.stop / st.rerun / st.switch_page pass through (they are BaseException, not Exception)."""
    try:
        yield
    except Exception as e:  # the point is to catch everything
        secrets = _secrets()
        log.error("error in %s: %s: %s", what, type(e).__name__, short(e, secrets))
        st.error(f"Something went wrong in {what}: {md(short(e, secrets))}", icon=":material/error:")


def rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


# Region backgrounds in the highlighted prompt: the map's colours, lighter so text stays readable.
_STYLE = {
    "instruction": f"background:{rgba(COLORS['instruction'], 0.22)}",
    "reminder": f"background:{rgba(COLORS['reminder'], 0.35)}",
    "page": f"background:{rgba(COLORS['page'], 0.12)}",
    "gold": f"background:{rgba(COLORS['gold'], 0.3)}",
    "question": f"background:{rgba(COLORS['question'], 0.3)}",
}
_BADGE = (
    "display:inline-block;padding:0 .4em;margin:.2em 0;border-radius:.3em;color:white;"
    "font-weight:600;font-size:.8em;background:{}"
)


def badge(text: str, kind: str) -> str:
    return f'<span style="{_BADGE.format(COLORS[kind])}">{html.escape(text)}</span>'


def legend_html() -> str:
    """The colour legend shared with the prompt map."""
    chips = " ".join(
        f'<span style="display:inline-block;margin-right:1em"><span style="display:inline-block;'
        f'width:.9em;height:.9em;border-radius:.2em;vertical-align:middle;background:{COLORS[k]}">'
        f"</span> {LABELS[k]}</span>"
        for k in ("instruction", "reminder", "page", "gold", "chunk")
    )
    return f'<div style="font-size:.9rem">{chips}</div>'


def prompt_html(prompt: Prompt, height_rem: int = 28) -> str:
    """The exact prompt text, escaped, with its spans highlighted in the prompt map's colours.

    Spans are nested (a chunk holds pages), so one pass with a stack suffices; a chunk is marked by
    a badge where it starts and ends instead of a background."""
    text = prompt.text
    out: list[str] = []
    stack: list[tuple[int, str]] = []  # (end_char, closing html)
    pos = 0

    def emit_to(end: int) -> None:
        nonlocal pos
        if end > pos:
            out.append(html.escape(text[pos:end]))
            pos = end

    def close_until(start: int) -> None:
        while stack and stack[-1][0] <= start:
            end, closing = stack.pop()
            emit_to(end)
            out.append(closing)

    for s in prompt.spans:
        close_until(s.start_char)
        emit_to(s.start_char)
        end = min(s.end_char, stack[-1][0]) if stack else s.end_char
        if s.kind == "chunk":
            out.append(badge(f"chunk {s.chunk} starts", "chunk") + "\n")
            stack.append((end, "\n" + badge(f"chunk {s.chunk} ends", "chunk")))
        else:
            title = f"page {s.page}" if s.page is not None else LABELS.get(s.kind, s.kind)
            if s.kind == "gold":
                title = f"gold page {s.page}"
            out.append(f'<span title="{html.escape(title)}" style="{_STYLE.get(s.kind, "")}">')
            stack.append((end, "</span>"))
    close_until(len(text))
    emit_to(len(text))
    body = "".join(out)
    return (
        f'<div style="max-height:{height_rem}rem;overflow:auto;white-space:pre-wrap;'
        "word-break:break-word;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.8rem;"
        f'line-height:1.45;border:1px solid #ddd;border-radius:.4rem;padding:.6rem">{body}</div>'
    )


@st.cache_data(max_entries=32, show_spinner=False)
def prompt_view(recipe: Recipe, strategy: str, params: tuple, question: str, index: int) -> str:
    """The highlighted prompt `index` a strategy builds before any call (cached: a long prompt's HTML)."""
    return prompt_html(prompts(recipe, strategy, params, question)[index])


def text_box(text: str, height_rem: int = 12) -> str:
    """Model or document text shown as plain text (escaped) in a scrollable box."""
    return (
        f'<div style="max-height:{height_rem}rem;overflow:auto;white-space:pre-wrap;'
        "word-break:break-word;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85rem;"
        f'border:1px solid #ddd;border-radius:.4rem;padding:.5rem">{html.escape(text)}</div>'
    )


def labelled(label: str, text: str) -> str:
    """A bold label and a plain (escaped) text on one line."""
    return f"<div><b>{html.escape(label)}</b> {html.escape(text)}</div>"


def pages_html(pages: tuple[int, ...] | list[int], gold: tuple[int, ...] | list[int]) -> str:
    """Retrieved pages as chips: gold pages hit in the gold colour, others grey; missed gold listed."""
    g = set(gold)
    chips = [
        badge(f"page {p} ✓ gold" if p in g else f"page {p}", "gold" if p in g else "page") for p in pages
    ]
    missed = [p for p in sorted(g) if p not in set(pages)]
    tail = (" &nbsp;missed gold: " + ", ".join(str(p) for p in missed)) if missed else ""
    return f"<div>{' '.join(chips) or 'no pages'}{tail}</div>"


_MD_SPECIAL = set("\\`*_{}[]()<>#+-.!|~$:=\"'&")


# Streamlit's markdown (remark-gfm) turns bare "http://", "www." and "a@b.c" in text into links after
# escapes are read, so md() puts an invisible WORD JOINER (U+2060) inside each: shown the same, no link.
WORD_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(?i)(?<=https:)(?=//)|(?<=http:)(?=//)|(?<=www)(?=\.)|(?<=@)(?=[-\w])")


def md(text: object) -> str:
    """Any user- or model-controlled text made inert for st.markdown, st.subheader and widget labels:
    every markdown, HTML and LaTeX character backslash-escaped, line breaks flattened, and bare URLs and
    e-mail addresses kept from becoming links. So a task id holding ![x](http://...) shows as those
    characters, no remote image is fetched and nothing in it is clickable."""
    s = _AUTOLINK.sub(WORD_JOINER, " ".join(str(text).split()))
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in s)


def upper_first(text: str) -> str:
    """'best subspan EM' -> 'Best subspan EM' (str.capitalize lowers the rest: 'Best subspan em')."""
    return text[:1].upper() + text[1:]


def thousands(n: int | float | None) -> str:
    if n is None:
        return "–"
    return f"{n:,.0f}" if float(n).is_integer() else f"{n:,.2f}"


def usd(x: float | None) -> str:
    if x is None:
        return "unknown"
    if x == 0:
        return "$0"
    return f"${x:,.4f}" if x < 1 else f"${x:,.2f}"
