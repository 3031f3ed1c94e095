"""The prompt map: where instructions, reminders, pages, the gold page and chunks sit along the
token axis of each prompt, and how far each page is from the nearest instruction.

UI-free: returns plain rows and a plotly Figure; the web app and scripts draw them.
Every text that reaches a hover label is HTML-escaped (plotly renders a subset of HTML).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from components.core.documents import Document
from components.core.prompts import Prompt, Span
from components.report.colours import PALETTE, colour_word

# One colour per region kind, shared by the map and the highlighted prompt (report.colours' palette).
COLORS = {
    "instruction": PALETTE["blue"],
    "reminder": PALETTE["amber"],
    "page": PALETTE["page grey"],
    "gold": PALETTE["red-orange"],
    "chunk": PALETTE["pink"],
    "question": PALETTE["sky-blue"],
}
PAGE_ALT = PALETTE["light grey"]  # every other page, so page boundaries show
LABELS = {
    "instruction": "instruction",
    "reminder": "reminder",
    "page": "page",
    "gold": "gold page",
    "chunk": "chunk",
    "question": "question",
}
ANCHORS = ("instruction", "reminder")  # what "distance to the nearest instruction" measures to
PREVIEW_CHARS = 90


@dataclass(frozen=True)
class Region:
    """One span of one prompt, in tokens; `distance` is set for pages (and gold pages)."""

    prompt: int
    kind: str
    start: int
    end: int
    page: int | None = None
    chunk: int | None = None
    distance: int | None = None


def n_tokens(n: int) -> str:
    """'1 token', '1,873 tokens'."""
    return f"{n:,} token" + ("" if n == 1 else "s")


def gap(a: Span, b: Span) -> int:
    """Tokens between two spans (0 if they touch or overlap)."""
    if a.end_token <= b.start_token:
        return b.start_token - a.end_token
    if b.end_token <= a.start_token:
        return a.start_token - b.end_token
    return 0


def page_distances(prompt: Prompt) -> dict[int, int]:
    """Page number -> tokens between that page and the nearest instruction or reminder block."""
    anchors = [s for s in prompt.spans if s.kind in ANCHORS]
    out: dict[int, int] = {}
    if not anchors:
        return out
    for s in prompt.spans:
        if s.kind in ("page", "gold") and s.page is not None:
            out[s.page] = min(gap(s, a) for a in anchors)
    return out


def regions(prompts: list[Prompt]) -> list[Region]:
    """Every span of every prompt as a Region, pages carrying their distance."""
    rows: list[Region] = []
    for i, prompt in enumerate(prompts):
        dist = page_distances(prompt)
        for s in prompt.spans:
            d = dist.get(s.page) if s.kind in ("page", "gold") and s.page is not None else None
            rows.append(Region(i, s.kind, s.start_token, s.end_token, s.page, s.chunk, d))
    return rows


@dataclass(frozen=True)
class GoldPlace:
    prompt: int
    label: str
    page: int
    start: int
    distance: int | None


def gold_places(prompts: list[Prompt]) -> list[GoldPlace]:
    """Where each gold page sits in each prompt and its distance to the nearest instruction."""
    out = []
    for r in regions(prompts):
        if r.kind == "gold" and r.page is not None:
            out.append(GoldPlace(r.prompt, prompts[r.prompt].label, r.page, r.start, r.distance))
    return out


def row_labels(prompts: list[Prompt]) -> list[str]:
    return [f"{i + 1}. {p.label or 'prompt'}" for i, p in enumerate(prompts)]


def _preview(doc: Document | None, number: int | None) -> str:
    if doc is None or number is None or not 1 <= number <= len(doc.pages):
        return ""
    text = " ".join(doc.page(number).text.split())
    if len(text) > PREVIEW_CHARS:
        text = text[:PREVIEW_CHARS] + "…"
    return "<br>" + html.escape(text)


def _hover(r: Region, doc: Document | None) -> str:
    size = f"tokens {r.start:,}–{r.end:,} ({r.end - r.start:,})"
    if r.kind in ("page", "gold"):
        head = f"<b>{'gold page' if r.kind == 'gold' else 'page'} {r.page}</b>"
        dist = "" if r.distance is None else f"<br>{n_tokens(r.distance)} from the nearest instruction"
        return f"{head}<br>{size}{dist}{_preview(doc, r.page)}"
    if r.kind == "chunk":
        return f"<b>chunk {r.chunk}</b><br>{size}"
    return f"<b>{LABELS.get(r.kind, html.escape(r.kind))}</b><br>{size}"


# Marks drawn above the bars so short blocks stay visible on a long axis.
_MARKS = {"instruction": "triangle-down", "reminder": "triangle-down", "gold": "star"}


RETRIEVED = {
    "hit": (PALETTE["green"], "circle", "retrieved: gold page (hit)"),
    "miss": (PALETTE["black"], "x-thin-open", "retrieved: not gold (miss)"),
}


def word(kind: str) -> str:
    """What the app's text calls a region's (or a retrieval mark's) colour on the map: 'amber'."""
    return colour_word(RETRIEVED[kind][0] if kind in RETRIEVED else COLORS[kind])


def colour_key() -> str:
    """The map's colours in words, read from COLORS: 'blue instructions, amber reminders, grey pages, the
    red-orange star the gold page'."""
    return (
        f"{word('instruction')} instructions, {word('reminder')} reminders, {word('page')} pages, the "
        f"{word('gold')} star the gold page"
    )


def retrieval_marks(prompts: list[Prompt], retrieved) -> list[tuple[str, int, float, int | None]]:
    """(hit|miss, prompt row, token x, page) for every retrieved page in each retrieval-stage
    prompt (stage 1) that holds it: where the model's choice of pages points on the map."""
    wanted = set(retrieved or ())
    out = []
    for i, prompt in enumerate(prompts):
        if prompt.stage != 1:
            continue
        for s in prompt.spans:
            if s.kind in ("page", "gold") and s.page in wanted:
                out.append(
                    ("hit" if s.kind == "gold" else "miss", i, (s.start_token + s.end_token) / 2, s.page)
                )
    return out


def _add_retrieved(fig: go.Figure, prompts: list[Prompt], retrieved) -> None:
    marks = retrieval_marks(prompts, retrieved)
    for kind, (colour, symbol, label) in RETRIEVED.items():
        sel = [m for m in marks if m[0] == kind]
        if not sel:
            continue
        fig.add_trace(
            go.Scatter(
                x=[m[2] for m in sel],
                y=[-m[1] - 0.42 for m in sel],
                mode="markers",
                name=label,
                marker={
                    "symbol": symbol,
                    "size": 12,
                    "color": colour,
                    "line": {"width": 2.5, "color": colour},
                },
                hovertext=[f"<b>page {m[3]}</b>: {label}" for m in sel],
                hoverinfo="text",
            ),
            row=1,
            col=1,
        )


def figure(prompts: list[Prompt], doc: Document | None = None, title: str = "", retrieved=None) -> go.Figure:
    """The prompt map: one row per prompt (bars along its token axis) and, below it, each page's
    distance to the nearest instruction or reminder. With `retrieved` (after an ICR/R&R run, the
    prompts of every stage), the retrieved pages are marked hit (gold) or miss on the stage-1 rows."""
    rows = regions(prompts)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.62, 0.38])
    _add_regions(fig, rows, len(prompts), doc)
    _add_distances(fig, rows, len(prompts), doc)
    if retrieved:
        _add_retrieved(fig, prompts, retrieved)
    _frame(fig, row_labels(prompts), title)
    return fig


def _add_regions(fig: go.Figure, rows: list, n: int, doc: Document | None) -> None:
    """The map's top: each prompt's regions as bars along its tokens, marks above the short ones."""
    y_of = {i: -i for i in range(n)}
    for kind in ["chunk", "page", "question", "instruction", "reminder", "gold"]:
        sel = [r for r in rows if r.kind == kind]
        if not sel:
            continue
        colors: list[str] | str
        if kind == "page":
            colors = [COLORS["page"] if (r.page or 0) % 2 else PAGE_ALT for r in sel]
        else:
            colors = COLORS[kind]
        chunk = kind == "chunk"
        fig.add_trace(
            go.Bar(
                orientation="h",
                base=[r.start for r in sel],
                x=[max(r.end - r.start, 1) for r in sel],
                y=[y_of[r.prompt] for r in sel],
                width=0.78 if chunk else 0.5,
                marker={
                    "color": "rgba(0,0,0,0)" if chunk else colors,
                    "line": {"color": COLORS[kind], "width": 2} if chunk else {"width": 0},
                },
                name=LABELS[kind],
                legendgroup=kind,
                hovertext=[_hover(r, doc) for r in sel],
                hoverinfo="text",
            ),
            row=1,
            col=1,
        )
        if kind in _MARKS:
            fig.add_trace(
                go.Scatter(
                    x=[(r.start + r.end) / 2 for r in sel],
                    y=[y_of[r.prompt] + 0.42 for r in sel],
                    mode="markers",
                    marker={
                        "symbol": _MARKS[kind],
                        "size": 13 if kind == "gold" else 10,
                        "color": COLORS[kind],
                        "line": {"width": 0.5, "color": "white"},
                    },
                    name=LABELS[kind],
                    legendgroup=kind,
                    showlegend=False,
                    hovertext=[_hover(r, doc) for r in sel],
                    hoverinfo="text",
                ),
                row=1,
                col=1,
            )


def _add_distances(fig: go.Figure, rows: list, n: int, doc: Document | None) -> None:
    """The map's bottom: the distance of every page to the nearest instruction, one line per prompt."""
    for i in range(n):
        pages = [r for r in rows if r.prompt == i and r.kind in ("page", "gold") and r.distance is not None]
        if not pages:
            continue
        fig.add_trace(
            go.Scatter(
                x=[(r.start + r.end) / 2 for r in pages],
                y=[r.distance for r in pages],
                mode="lines",
                line={"color": "#555555", "width": 1.5},
                name="distance to nearest instruction",
                legendgroup="distance",
                showlegend=i == 0,
                hovertext=[_hover(r, doc) for r in pages],
                hoverinfo="text",
            ),
            row=2,
            col=1,
        )
        gold = [r for r in pages if r.kind == "gold"]
        if gold:
            fig.add_trace(
                go.Scatter(
                    x=[(r.start + r.end) / 2 for r in gold],
                    y=[r.distance for r in gold],
                    mode="markers",
                    marker={"symbol": "star", "size": 13, "color": COLORS["gold"]},
                    name=LABELS["gold"],
                    legendgroup="gold",
                    showlegend=False,
                    hovertext=[_hover(r, doc) for r in gold],
                    hoverinfo="text",
                ),
                row=2,
                col=1,
            )


def _frame(fig: go.Figure, labels: list[str], title: str) -> None:
    """The map's axes, size and legend: one labelled row per prompt."""
    n = len(labels)
    fig.update_yaxes(
        tickvals=[-i for i in range(n)],
        ticktext=[html.escape(t) for t in labels],
        range=[-n + 0.4, 0.75],
        showgrid=False,
        zeroline=False,
        row=1,
        col=1,
    )
    fig.update_yaxes(
        title_text="tokens to<br>instruction",
        title_standoff=4,
        tickformat="~s",
        rangemode="tozero",
        nticks=4,
        row=2,
        col=1,
    )
    fig.update_xaxes(
        title_text="token position in the prompt",
        tickformat=",d",
        automargin=True,
        title_standoff=6,
        row=2,
        col=1,
    )
    fig.update_xaxes(tickformat=",d", row=1, col=1)
    fig.update_yaxes(automargin=True)  # row labels and the distance axis get the room they need
    fig.update_layout(
        barmode="overlay",
        bargap=0,
        height=340 + 34 * min(n, 20),
        margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        title=html.escape(title) if title else None,
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        hoverlabel={"align": "left"},
        plot_bgcolor="white",
        separators=".,",
    )


# --- drill-down: a stored call's prompt, with its regions found again ----------------------------

_REGION_PATTERNS = [
    ("instruction", r"<INSTRUCTIONS>.*?</INSTRUCTIONS>"),
    ("reminder", r"<INSTRUCTIONS_REMINDER>.*?</INSTRUCTIONS_REMINDER>"),
    ("page", r"<PAGE (\d+)>.*?</PAGE \1>"),
    ("page", r"^Document \[(\d+)\]\(Title: [^\n]*"),
    ("question", r"^Question: [^\n]*"),
]


def message_text(messages: list[dict]) -> str:
    """The text of a stored request: its messages' contents, in order."""
    parts = []
    for m in messages or []:
        content = m.get("content", "") if isinstance(m, dict) else str(m)
        if isinstance(content, list):  # content blocks
            content = "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
        parts.append(str(content))
    return "\n\n".join(parts)


def rebuild_prompt(
    messages: list[dict], gold_pages=(), stage: int = 1, label: str = "", encoding: str = "cl100k_base"
):
    """A components.core.prompts.Prompt from a stored request, its spans found by the templates' tags
    (<INSTRUCTIONS>, <INSTRUCTIONS_REMINDER>, <PAGE p>, LITM's `Document [i](Title: ...)`, `Question:`).
    Pages listed in `gold_pages` become gold spans. Token offsets are counted piece by piece."""
    import re

    from components.core.tokens import tokenizer

    text = message_text(messages)
    gold = {int(p) for p in (gold_pages or []) if str(p).lstrip("-").isdigit()}
    found: list[tuple[int, int, str, int | None]] = []
    for kind, pattern in _REGION_PATTERNS:
        for m in re.finditer(pattern, text, flags=re.S | re.M):
            page = int(m.group(1)) if m.groups() else None
            if kind == "page" and page in gold:
                kind_here = "gold"
            else:
                kind_here = kind
            found.append((m.start(), m.end(), kind_here, page))
    found.sort(key=lambda f: (f[0], -f[1]))
    spans, pos, toks, last_end = [], 0, 0, -1
    tok = tokenizer(encoding)
    for start, end, kind, page in found:
        if start < last_end:  # nested or overlapping match: keep the outer one
            continue
        toks += tok.count(text[pos:start]) if start > pos else 0
        n = tok.count(text[start:end])
        spans.append(Span(kind, start, end, toks, toks + n, page, None))
        toks += n
        pos = last_end = end
    toks += tok.count(text[pos:]) if pos < len(text) else 0
    return Prompt(stage, text, toks, tuple(spans), label)
