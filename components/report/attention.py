"""The Playground's strip "where the model looks": each page's share of the last prompt token's attention
(components/providers/attention.py), drawn along the prompt map's token axis (the same spans, the same
x), the gold page in the map's gold colour."""

from __future__ import annotations

import plotly.graph_objects as go

from components.core.prompts import Prompt
from components.report.promptmap import COLORS

MEANING = (
    "Each bar is the share of the model's attention, from the last token of the prompt (the one that "
    "writes the first word of the answer), that a page gets, over all layers and heads; the rest goes to "
    "the instructions and the question. Higher at the start and the end than in the middle, whatever the "
    "pages hold, is the positional attention bias that Hsieh et al. 2024 tie to the lost middle."
)


def strip_rows(prompt: Prompt, masses: dict[int, float]) -> list[dict]:
    """One row per page of the prompt, in prompt order: page, gold, token span (the map's), share."""
    return [
        {
            "page": s.page,
            "gold": s.kind == "gold",
            "start": s.start_token,
            "end": s.end_token,
            "mass": masses.get(int(s.page), 0.0),
        }
        for s in prompt.spans
        if s.kind in ("page", "gold") and s.page is not None
    ]


def strip_figure(prompt: Prompt, masses: dict[int, float], other: float) -> go.Figure:
    rows = strip_rows(prompt, masses)
    fig = go.Figure(
        go.Bar(
            x=[(r["start"] + r["end"]) / 2 for r in rows],
            y=[100 * r["mass"] for r in rows],
            width=[max(r["end"] - r["start"], 1) for r in rows],
            marker_color=[COLORS["gold"] if r["gold"] else COLORS["page"] for r in rows],
            marker_line={"color": "white", "width": 1},
            customdata=[[r["page"], "gold page" if r["gold"] else "page"] for r in rows],
            hovertemplate="%{customdata[1]} %{customdata[0]}: %{y:.1f}% of the attention<extra></extra>",
            showlegend=False,
        )
    )
    fig.update_xaxes(
        title_text="token position in the prompt",
        tickformat=",d",
        range=[0, prompt.tokens],
        automargin=True,
        title_standoff=6,
    )
    fig.update_yaxes(title_text="% of attention", rangemode="tozero", automargin=True, title_standoff=6)
    title = f"Pages {100 * sum(masses.values()):.0f}% of the attention, the rest {100 * other:.0f}%"
    fig.update_layout(
        height=280,
        bargap=0,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        title=title,
        plot_bgcolor="white",
        separators=".,",
    )
    return fig
