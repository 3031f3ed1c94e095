"""The Lesson's charts from published numbers and from the engine's own estimates (UI-free)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from components.report import charts
from components.report.colours import PALETTE
from components.report.theme import set_layout

HEIGHT = 440  # a chart and its legend beside the step's text, on one 1024x576 screen


def litm_curves(pub: pd.DataFrame, n_documents: int = 20) -> go.Figure:
    """LITM Tables 5-7: accuracy by the gold document's index, one line per model, with the
    GPT-3.5-Turbo closed-book accuracy (Table 1) as a reference line."""
    table = {10: "Table 5", 20: "Table 6", 30: "Table 7"}[n_documents]
    rows = pub[(pub["source"] == "liu2023") & (pub["table"] == table)].copy()
    rows["gold_index"] = rows["gold_index"].astype(int)
    refs = pub[
        (pub["source"] == "liu2023")
        & (pub["table"] == "Table 1")
        & (pub["model"] == "GPT-3.5-Turbo")
        & (pub["method"] == "closed-book")
    ]
    fig = charts.published_lines(
        rows,
        "gold_index",
        "model",
        title=f"Lost in the Middle, {table}: {n_documents} documents",
        x_title="gold document index (0 = first)",
        y_title="accuracy (%)",
    )
    xs = sorted(rows["gold_index"].unique())
    if len(refs):  # in the legend rather than on the lines, which it would cross
        value = float(refs["value"].iloc[0])
        fig.add_trace(
            go.Scatter(
                x=[xs[0], xs[-1]],
                y=[value, value],
                mode="lines",
                name=f"GPT-3.5-Turbo, no documents (closed-book): {value:g}",
                line=dict(color="#000000", dash="dash", width=2),
                legendgroup="ref:closed-book",
                hovertemplate=f"closed-book, as published: {value:g}<extra></extra>",
            )
        )
    fig.update_xaxes(tickvals=xs)
    fig.update_layout(height=HEIGHT)
    return fig


def rr_positions(pub: pd.DataFrame, length: int = 80_000, dataset: str = "NQ") -> go.Figure:
    """R&R App. B Table 7: fuzzy match by answer position, Baseline / Reprompt / R&R, GPT-4 Turbo."""
    rows = pub[
        (pub["source"] == "rr2024")
        & (pub["table"] == "Table 7")
        & (pub["dataset"] == dataset)
        & (pub["doc_length_tokens"] == length)
    ].copy()
    rows["x"] = rows["answer_position_tokens"].astype(int)
    fig = charts.published_lines(
        rows,
        "x",
        "method",
        title=f"R&R, Table 7: {dataset}, d = {length // 1000}k tokens, GPT-4 Turbo",
        x_title="answer position (tokens)",
        y_title="fuzzy match (%)",
    )
    fig.update_xaxes(tickformat="~s")
    fig.update_layout(height=HEIGHT)
    return fig


def chunking(pub: pd.DataFrame, dataset: str = "NQ", model: str = "GPT-4 Turbo") -> go.Figure:
    """R&R Tables 2-3: accuracy by chunk size c (d = 80k), with the calls m each c costs on the axis."""
    rr = pub[pub["source"] == "rr2024"]
    rows = rr[(rr["table"] == "Table 2") & (rr["dataset"] == dataset) & (rr["model"] == model)].copy()
    rows["c"] = rows["chunk_size_tokens"].astype(int)
    calls = rr[(rr["table"] == "Table 3") & (rr["metric"] == "llm_calls") & (rr["method"] == "Chunkwise ICR")]
    m = {int(c): int(v) for c, v in zip(calls["chunk_size_tokens"], calls["value"], strict=True)}
    fig = charts.published_lines(
        rows,
        "c",
        "method",
        title=f"R&R, Tables 2-3: {dataset}, d = 80k, {model}",
        x_title="chunk size c (tokens); m = LLM calls per question",
        y_title="fuzzy match (%)",
    )
    cs = sorted(rows["c"].unique())
    fig.update_xaxes(type="log", tickvals=cs, ticktext=[f"{c // 1000}k (m={m.get(c, '?')})" for c in cs])
    fig.update_layout(height=HEIGHT)
    return fig


def strategy_costs(rows: list[dict]) -> go.Figure:
    """Calls and input tokens per question for each strategy (the engine's estimate for one prompt)."""
    fig = go.Figure()
    names = [r["label"] for r in rows]
    fig.add_trace(
        go.Bar(
            x=names,
            y=[r["calls"] for r in rows],
            name="LLM calls",
            marker_color=PALETTE["blue"],
            text=[str(r["calls"]) for r in rows],
            textposition="outside",
            cliponaxis=False,
            yaxis="y",
            offsetgroup="calls",
            hovertemplate="%{x}: %{y} call(s)<extra></extra>",
        )
    )
    fig.add_trace(
        go.Bar(
            x=names,
            y=[r["input_tokens"] for r in rows],
            name="input tokens",
            marker_color=PALETTE["red-orange"],
            text=[f"{r['input_tokens']:,}" for r in rows],
            textposition="outside",
            cliponaxis=False,
            yaxis="y2",
            offsetgroup="tokens",
            hovertemplate="%{x}: %{y:,} input tokens<extra></extra>",
        )
    )
    set_layout(fig, "Cost of one question, by strategy", "strategy", "LLM calls", percent=False)
    top_calls = max([r["calls"] for r in rows] or [1])
    top_tokens = max([r["input_tokens"] for r in rows] or [1])
    fig.update_layout(
        barmode="group",
        height=HEIGHT,
        yaxis=dict(range=[0, top_calls * 1.25], dtick=1),
        yaxis2=dict(
            title="input tokens",
            overlaying="y",
            side="right",
            showgrid=False,
            tickformat=",.0f",
            range=[0, top_tokens * 1.25],
            nticks=5,
        ),
    )
    return fig


def attention_beside_accuracy(attention: pd.DataFrame | None, accuracy: pd.DataFrame | None) -> go.Figure:
    """Hsieh et al. 2024 ("Found in the Middle", arXiv 2406.16008) §2: the lost middle beside a U-shaped
    positional attention bias. Left, the gold document's share of the last prompt token's attention by its
    index; right, accuracy by the same index: each point's mean with its 95% interval (points as
    report.shape.curves gives them: gold_index, n, mean, lo, hi; a missing run leaves its panel with a line
    saying so)."""
    from plotly.subplots import make_subplots

    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.14,
        subplot_titles=("Attention on the gold document", "Accuracy"),
    )
    panels = (
        (attention, 1, PALETTE["blue"], "attention on the gold document", "the attention run is not shipped"),
        (accuracy, 2, PALETTE["red-orange"], "accuracy", "the accuracy run is not shipped"),
    )
    for points, col, colour, what, missing in panels:
        if points is None or points.empty:
            fig.add_annotation(
                text=missing,
                x=0.5,
                y=0.5,
                xref=f"x{col if col > 1 else ''} domain",
                yref=f"y{col if col > 1 else ''} domain",
                showarrow=False,
                font=dict(size=14, color="#555"),
            )
            continue
        p = points.sort_values("gold_index")
        mean = [100 * float(v) for v in p["mean"]]  # plain lists: the chart's JSON holds the numbers
        fig.add_trace(
            go.Scatter(
                x=[int(v) for v in p["gold_index"]],
                y=mean,
                mode="lines+markers",
                name=what,
                line=dict(color=colour, width=2.5),
                marker=dict(color=colour, size=8),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=[100 * float(h) - m for h, m in zip(p["hi"], mean, strict=True)],
                    arrayminus=[m - 100 * float(lo) for lo, m in zip(p["lo"], mean, strict=True)],
                    color=colour,
                    thickness=1.5,
                    width=4,
                ),
                customdata=[[int(n)] for n in p["n"]],
                hovertemplate=f"gold at %{{x}}: {what} %{{y:.1f}}% (n=%{{customdata[0]}})<extra></extra>",
                showlegend=False,
            ),
            row=1,
            col=col,
        )
    set_layout(fig, "", "gold document index (0 = first of 20)", "", percent=False)
    fig.update_xaxes(tickvals=[0, 4, 9, 14, 19], range=[-1, 20])
    fig.update_xaxes(title_text="gold document index", row=1, col=2)
    fig.update_yaxes(title_text="% of the attention", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="% right", range=[0, 100], row=1, col=2)
    fig.update_layout(height=HEIGHT, showlegend=False, margin=dict(l=60, r=20, t=40, b=40))
    return fig
