"""Plotly figures for results and published curves. UI-free: tables in, figures out.

Colours come from the registries: one per strategy (STRATEGY_COLOURS) and one per model (MODEL_COLOURS,
the bundled models then the priced ones), Okabe-Ito first then Paul Tol's colour-blind-safe sets, the
same in normal and presenter mode, so a strategy or a model looks the same on every chart. A series
takes its strategy's colour when its name starts with one, else its model's; series of one colour differ
by dash and marker (10 and 20 documents), and a published curve is dotted with hollow markers (a
measured one solid or dashed with filled ones). Every accuracy point carries n and its 95% interval in
the hover text; the legend names the series with its n.

Plotly renders a subset of HTML in legend names, hover and point texts (<b>, <a href>, <img>-free but
links and styles work): every label that comes from data (task sets, sweep names, model names, params)
goes through `esc` first, so it shows as the characters it is.
"""

from __future__ import annotations

import html
import math
import zlib

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from components.providers.localmodel import MODELS
from components.providers.pricing import PRICES
from components.report.sweeps import model_title, setting_parts
from components.strategies import STRATEGIES


def esc(text) -> str:
    """A data-controlled string made inert for plotly's HTML subset (legend, hover, text)."""
    return html.escape(str(text), quote=False)


# One colour per registered strategy (components.strategies.STRATEGIES), given in the registry's order
# from this list (Okabe-Ito, then Paul Tol's colour-blind-safe sets): a strategy added to the registry
# takes the next colour, and no name here can drift from the registry's.
STRATEGY_PALETTE = [
    "#4D4D4D",  # baseline
    "#332288",
    "#7B68C8",
    "#000000",
    "#997700",
    "#AA4466",  # litm, litm-qac, closed-book, oracle, kv
    "#0072B2",
    "#009E73",
    "#882255",
    "#44AA99",  # reprompt and its three placements
    "#E69F00",
    "#D55E00",
    "#56B4E9",
    "#CC79A7",  # icr, rr, chunked-icr, chunked-rr
    "#117733",
    "#AA4499",
    "#999933",  # retrieve-then-reason, quotes-first, s2a
    "#6699CC",
    "#661100",  # reorder, keyword
    "#88CCEE",  # direct-answer
    "#DDCC77",
    "#CC6677",
    "#44BB99",
    "#EE8866",  # for strategies still to come
]
STRATEGY_COLOURS: dict[str, str] = {
    name: STRATEGY_PALETTE[i % len(STRATEGY_PALETTE)] for i, name in enumerate(STRATEGIES)
}
# the names the papers print for their methods (components/data/published tables) -> registered
# strategies, so a published curve takes its strategy's colour; "Reprompt (r=5k)" is read as "Reprompt"
PAPER_NAMES = {
    "Baseline": "baseline",
    "direct answer": "baseline",
    "Reprompt": "reprompt",
    "R&R": "rr",
    "page retrieval": "icr",
    "Chunkwise ICR": "chunked-icr",
    "Chunkwise R&R": "chunked-rr",
    "Tags only": "reprompt-tags-only",
    "At beginning only": "reprompt-at-beginning",
    "Before answer only": "reprompt-before-gold",
    "multi-document QA": "litm",
    "closed-book": "closed-book",
    "oracle": "oracle",
    "DA": "direct-answer",
    "RR": "retrieve-then-reason",
    "QF": "quotes-first",
    "S2A": "s2a",
}
PALETTE = [
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#882255",
    "#44AA99",
    "#332288",
    "#999933",
    "#AA4499",
    "#117733",
    "#661100",
    "#4D4D4D",
]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]
SYMBOLS = ["circle", "square", "diamond", "triangle-up", "x", "star", "cross", "triangle-down"]
PUBLISHED_SYMBOLS = ["circle-open", "square-open", "diamond-open", "triangle-up-open", "star-open"]
FONT = dict(size=14)


STRATEGY_LABELS = {s.label: name for name, s in STRATEGIES.items()}  # display name -> strategy

# One colour per model, given in the model registries' order (the bundled models, then every priced
# model by provider): the bundled model takes Okabe-Ito's blue, a model keeps its colour on every chart.
MODEL_PALETTE = [
    *PALETTE[:6],  # Okabe-Ito's six colours, as the strategies' palette begins
    "#332288",
    "#117733",
    "#882255",
    "#999933",
    "#AA4499",
    "#44AA99",
    "#661100",
    "#6699CC",
]


def model_key(name) -> str:
    """A model's registry key from any of its names: 'Qwen2.5 Coder 0.5B', 'local:qwen2.5-coder-0.5b-
    instruct' and 'qwen2.5-coder-0.5b-instruct' give one key; 'GPT-3.5-Turbo' (as a paper prints it)
    and 'openai:gpt-3.5-turbo' another."""
    text = model_title(name)
    return " ".join(text.lower().replace("-", " ").split())


MODEL_COLOURS: dict[str, str] = {
    model_key(m): MODEL_PALETTE[i % len(MODEL_PALETTE)]
    for i, m in enumerate(
        dict.fromkeys([*(f"local:{k}" for k in MODELS), *(m for models in PRICES.values() for m in models)])
    )
}


def strategy_of(name) -> str | None:
    """The registered strategy a series name stands for: the strategy's own name or display name, a
    method name a paper prints (PAPER_NAMES, with a parameter in brackets dropped: "Reprompt (r=10k)"),
    else None."""
    text = str(name)
    for key in (text, text.split(" (", 1)[0]):
        key = STRATEGY_LABELS.get(key, PAPER_NAMES.get(key, key))
        if key in STRATEGIES:
            return key
    return None


def model_colour(name) -> str | None:
    """A registered model's colour (by any of its names), else None."""
    return MODEL_COLOURS.get(model_key(name))


def colour_for(name: str) -> str:
    """The colour of a strategy (or a paper's name for it), else of a registered model, else of any
    other series name, stably hashed onto the palette."""
    key = strategy_of(name)
    if key is not None:
        return STRATEGY_COLOURS[key]
    return model_colour(name) or PALETTE[zlib.crc32(str(name).encode()) % len(PALETTE)]


def rgba(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def set_layout(fig: go.Figure, title: str, x_title: str, y_title: str, percent: bool = True) -> go.Figure:
    """Every chart's frame: title, axis titles, font, legend under the plot; a percent y axis unless told."""
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left"),
        font=FONT,
        template="plotly_white",
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0),
        margin=dict(l=70, r=20, t=60, b=40),
        hovermode="closest",
        height=520,
    )
    fig.update_xaxes(title_text=x_title, showline=True, linecolor="#888", zeroline=False)
    fig.update_yaxes(title_text=y_title, showline=True, linecolor="#888", zeroline=False)
    if percent:
        fig.update_yaxes(tickformat=".0%", range=[-0.02, 1.02])
    return fig


def is_strategy(name: str) -> bool:
    return strategy_of(name) is not None


def _registered_colour(name) -> str | None:
    key = strategy_of(name)
    return STRATEGY_COLOURS[key] if key is not None else model_colour(name)


def _head_colours(heads: list[str]) -> dict[str, str]:
    """Strategies and registered models keep their colour; other names take distinct palette colours
    in order."""
    out = {h: c for h in heads if (c := _registered_colour(h)) is not None}
    free = [c for c in PALETTE if c not in out.values()] or PALETTE
    i = 0
    for h in heads:
        if h not in out:
            out[h] = free[i % len(free)]
            i += 1
    return out


def _series_style(labels: list[str]) -> dict[str, dict]:
    """label -> colour (by its first part: a strategy's own colour, else a distinct one), dash and
    symbol (by its position among labels of the same colour: "Reprompt (r=5k)" and "Reprompt (r=10k)"
    share the reprompt colour and differ by dash)."""
    heads = [str(label).split(" · ")[0] for label in labels]
    colours = _head_colours(list(dict.fromkeys(heads)))
    styles: dict[str, dict] = {}
    seen: dict[str, int] = {}
    for label, head in zip(labels, heads, strict=True):
        k = seen.get(colours[head], 0)
        seen[colours[head]] = k + 1
        styles[label] = {
            "colour": colours[head],
            "dash": DASHES[k % len(DASHES)],
            "symbol": SYMBOLS[len(styles) % len(SYMBOLS)],
        }
    return styles


def _hover(x_title: str, percent: bool = True) -> str:
    if not percent:  # a log-probability: nats, its interval a bootstrap over questions
        return (
            f"<b>%{{fullData.name}}</b><br>{x_title}: %{{x}}<br>mean log-probability: %{{y:.2f}} nats"
            "<br>95% interval: %{customdata[1]:.2f} – %{customdata[2]:.2f}<br>n = %{customdata[0]} questions"
            "<extra></extra>"
        )
    return (
        f"<b>%{{fullData.name}}</b><br>{x_title}: %{{x}}<br>accuracy: %{{y:.1%}}"
        "<br>95% CI: %{customdata[1]:.1%} – %{customdata[2]:.1%}<br>n = %{customdata[0]}"
        "<br>errors (not scored): %{customdata[3]}<extra></extra>"
    )


def accuracy_lines(
    table: pd.DataFrame,
    x: str,
    *,
    title: str,
    x_title: str,
    metric_label: str,
    overlays: pd.DataFrame | None = None,
    log_x: bool = False,
    percent: bool = True,
) -> go.Figure:
    """Lines of accuracy (mean) with Wilson bands (lo..hi), one per `series`; n in legend and hover.

    `table` has columns series, x, n, mean, lo, hi, errors (see components.report.analysis.u_curve).
    `overlays` (optional) has columns label, x, mean, method: published curves, drawn dashed and
    hollow, named "published (paper, table, model ...)". `percent=False`: a value that is not a share
    (the likelihood, in nats), its axis fitted to the data.
    """
    fig = go.Figure()
    table = table[table["n"] > 0] if "n" in table else table
    labels = list(dict.fromkeys(table["series"])) if len(table) else []
    styles = _series_style(labels)
    for label in labels:
        part = table[table["series"] == label].sort_values(x)
        st = styles[label]
        xs, lo, hi = list(part[x]), list(part["lo"]), list(part["hi"])
        if len(part) > 1:
            fig.add_trace(
                go.Scatter(
                    x=xs + xs[::-1],
                    y=hi + lo[::-1],
                    fill="toself",
                    fillcolor=rgba(st["colour"], 0.15),
                    mode="lines",
                    line=dict(width=0),
                    hoverinfo="skip",
                    showlegend=False,
                    legendgroup=label,
                    name=f"{esc(label)} 95% CI",
                )
            )
        custom = part[["n", "lo", "hi", "errors"]].to_numpy()
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=part["mean"],
                mode="lines+markers",
                name=f"{esc(label)} (n={int(part['n'].sum())})",
                legendgroup=label,
                line=dict(color=st["colour"], width=2.5, dash=st["dash"]),
                marker=dict(symbol=st["symbol"], size=9, color=st["colour"]),
                customdata=custom,
                hovertemplate=_hover(x_title, percent),
                error_y=None
                if len(part) > 1
                else dict(
                    type="data",
                    symmetric=False,
                    array=part["hi"] - part["mean"],
                    arrayminus=part["mean"] - part["lo"],
                    color=st["colour"],
                ),
            )
        )
    if overlays is not None and not overlays.empty:
        # a published curve takes its strategy's colour where the measured lines are strategies (the
        # same colour, dotted and hollow), its model's where they are models (Home: model against model)
        by_strategy = any(is_strategy(str(label).split(" · ")[0]) for label in labels) or not labels
        used: dict[str, int] = {}
        for label, part in overlays.groupby("label", sort=False):
            part = part.sort_values("x")
            method = str(part["method"].iloc[0]) if "method" in part else ""
            model = str(part["model"].iloc[0]) if "model" in part else ""
            colour = (
                (colour_for(method) if by_strategy else model_colour(model) or colour_for(method))
                if (method or model)
                else "#444"
            )
            k = used.get(colour, 0)  # published curves of one colour (10 and 20 documents): own markers
            used[colour] = k + 1
            fig.add_trace(
                go.Scatter(
                    x=part["x"],
                    y=part["mean"],
                    mode="lines+markers",
                    name=esc(label),
                    line=dict(color=colour, width=1.8, dash="dot"),
                    marker=dict(symbol=PUBLISHED_SYMBOLS[k % len(PUBLISHED_SYMBOLS)], size=8, color=colour),
                    hovertemplate=f"<b>{esc(label)}</b><br>{x_title}: %{{x}}<br>as published: %{{y:.1%}}<extra></extra>",
                )
            )
    set_layout(fig, title, x_title, metric_label, percent=percent)
    if log_x:
        fig.update_xaxes(type="log")
    if not labels and (overlays is None or overlays.empty):
        _empty_note(fig, "No scored trials for this selection")
    return fig


def _empty_note(fig: go.Figure, text: str) -> None:
    fig.add_annotation(
        text=text, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False, font=dict(size=16, color="#555")
    )


def u_curve(
    table: pd.DataFrame,
    *,
    x_title: str = "answer position (tokens)",
    metric_label: str = "accuracy",
    title: str = "Accuracy by answer position",
    overlays: pd.DataFrame | None = None,
) -> go.Figure:
    return accuracy_lines(
        table, "position", title=title, x_title=x_title, metric_label=metric_label, overlays=overlays
    )


def accuracy_vs_length(
    table: pd.DataFrame, *, metric_label: str = "accuracy", title: str = "Accuracy by document length"
) -> go.Figure:
    lengths = sorted(
        pd.to_numeric(table.get("length", pd.Series(dtype=float)), errors="coerce").dropna().unique()
    )
    wide = len(lengths) > 2 and lengths[0] > 0 and lengths[-1] / lengths[0] >= 8
    fig = accuracy_lines(
        table,
        "length",
        title=title,
        x_title="document length (tokens)",
        metric_label=metric_label,
        log_x=wide,
    )
    if lengths:
        fig.update_xaxes(tickvals=lengths, ticktext=[f"{v:,.0f}" for v in lengths])
    return fig


def heatmap(
    mean: pd.DataFrame,
    n: pd.DataFrame,
    *,
    metric_label: str = "accuracy",
    title: str = "Accuracy by length and answer position",
    x_title: str = "answer position",
) -> go.Figure:
    """Length (rows) x position (columns); each cell prints its accuracy and n."""
    fig = go.Figure()
    if mean.empty:
        _empty_note(fig, "No scored trials for this selection")
        return set_layout(fig, title, x_title, "document length (tokens)", percent=False)
    text = [
        [("" if pd.isna(v) else f"{v:.0%}<br>n={c}") for v, c in zip(mr, nr, strict=True)]
        for mr, nr in zip(mean.to_numpy(), n.to_numpy(), strict=True)
    ]
    fig.add_trace(
        go.Heatmap(
            z=mean.to_numpy(),
            x=[str(c) for c in mean.columns],
            y=[str(i) for i in mean.index],
            text=text,
            texttemplate="%{text}",
            colorscale="Viridis",
            zmin=0,
            zmax=1,
            colorbar=dict(title=dict(text=metric_label), tickformat=".0%"),
            customdata=n.to_numpy(),
            hovertemplate=f"length %{{y}}<br>{x_title} %{{x}}<br>{metric_label}: %{{z:.1%}}<br>n = %{{customdata}}"
            "<extra></extra>",
        )
    )
    set_layout(fig, title, x_title, "document length (tokens)", percent=False)
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category")
    return fig


COST_TITLES = {
    "cost_usd": "dollars per 1,000 questions",
    "calls": "LLM calls per question",
    "input_tokens": "input tokens per question",
    "output_tokens": "output tokens per question",
}


def accuracy_vs_cost(
    table: pd.DataFrame,
    cost: str = "cost_usd",
    *,
    metric_label: str = "accuracy",
    title: str = "Accuracy against cost",
    free_note: str = "",
) -> go.Figure:
    """One point per setting (strategy + params, and model): x = mean cost per question (dollars per
    1,000 questions), y = accuracy ± CI; both axes from 0; each point labelled with its parameters in
    full ("r=200", "r=2000"), labels placed apart (`place_labels`); settings on one spot share a label.
    Points of one strategy are joined in order of cost, so chunk sizes read as a trade-off curve.
    `free_note`: said under the axis when the dollars are a reference price (the trials ran free)."""
    fig = go.Figure()
    x_title = COST_TITLES.get(cost, cost) + (f" ({free_note})" if free_note else "")
    col = f"{cost}_per_trial"
    data = table[(table["n"] > 0) & table[col].notna()] if len(table) and col in table else table.iloc[0:0]
    if data.empty:
        _empty_note(fig, "No cost recorded for this selection" if len(table) else "No scored trials")
        return set_layout(fig, title, x_title, metric_label)
    scale = 1000.0 if cost == "cost_usd" else 1.0
    data = data.assign(
        strategy_name=data["setting"].astype(str).map(lambda v: setting_parts(v)[0]),
        x_=pd.to_numeric(data[col], errors="coerce") * scale,
    )
    group_cols = ["strategy_name", "model"] if "model" in data else ["strategy_name"]
    labels = [  # 'ICR · gpt-4o-mini': the strategy's and the model's display names
        " · ".join(x for x in (str(k[0]), *(model_title(m) for m in k[1:])) if x)
        for k, _ in data.groupby(group_cols, sort=True)
        for k in [k if isinstance(k, tuple) else (k,)]
    ]
    styles = _series_style(labels)
    top = float(data["x_"].max() or 0)
    x_range = [0.0, top * 1.15 if top > 0 else 1.0]
    parts = [
        (label, part.sort_values("x_"))
        for (_key, part), label in zip(data.groupby(group_cols, sort=True), labels, strict=True)
    ]
    xs = [x for _, part in parts for x in part["x_"]]
    ys = [y for _, part in parts for y in part["mean"]]
    short = [setting_parts(s)[1] for _, part in parts for s in part["setting"].astype(str)]
    shown = [""] * len(short)
    for g in _groups(xs, ys, x_range, ACCURACY_RANGE):  # settings on one spot: one label naming them all
        shown[g[0]] = " / ".join(dict.fromkeys(short[i] for i in g if short[i]))
    places = place_labels(xs, ys, shown, x_range, ACCURACY_RANGE)
    at = 0
    for label, part in parts:
        n = len(part)
        st = styles[label]
        fig.add_trace(
            go.Scatter(
                x=part["x_"],
                y=part["mean"],
                mode="lines+markers+text",
                text=[esc(t) for t in shown[at : at + n]],
                textposition=places[at : at + n],
                cliponaxis=False,
                textfont=dict(size=13),
                name=f"{esc(label)} (n={int(part['n'].sum())})",
                line=dict(color=st["colour"], width=1.5, dash=st["dash"]),
                marker=dict(symbol=st["symbol"], size=10, color=st["colour"]),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=part["hi"] - part["mean"],
                    arrayminus=part["mean"] - part["lo"],
                    color=st["colour"],
                    thickness=1.2,
                ),
                customdata=part[["n", "lo", "hi", "errors"]]
                .assign(setting=part["setting"].astype(str).map(esc))
                .to_numpy(),
                hovertemplate=(
                    "<b>%{customdata[4]}</b><br>" + x_title + ": %{x:,.4g}<br>accuracy: %{y:.1%}"
                    "<br>95% CI: %{customdata[1]:.1%} – %{customdata[2]:.1%}<br>n = %{customdata[0]}"
                    "<br>errors (not scored): %{customdata[3]}<extra></extra>"
                ),
            )
        )
        at += n
    set_layout(fig, title, x_title, metric_label)
    fig.update_yaxes(
        range=ACCURACY_RANGE, autorange=False, ticklabelstandoff=8
    )  # "0%" clear of the x axis' 0
    fig.update_xaxes(range=x_range, autorange=False, ticklabelstandoff=4)
    if cost == "cost_usd":
        fig.update_xaxes(tickprefix="$", tickformat=",.4~f")
    else:
        fig.update_xaxes(tickformat=",~r")
    return fig


# --- published numbers (Papers page) ------------------------------------------------------------


def printed(rows: pd.DataFrame) -> list[str]:
    """Each value as the paper printed it (trailing zeros kept) when known."""
    if "value_printed" in rows:
        return rows["value_printed"].astype(str).tolist()
    return [f"{v:g}" for v in rows["value"]]


def published_lines(
    rows: pd.DataFrame,
    x: str,
    series: str,
    *,
    title: str,
    x_title: str,
    y_title: str,
    references: pd.DataFrame | None = None,
    x_format: str | None = None,
) -> go.Figure:
    """Published values as printed (no rescaling), one line per `series`; `references` rows
    (label, value) become horizontal reference lines (e.g. closed-book and oracle)."""
    fig = go.Figure()
    labels = list(dict.fromkeys(rows[series].astype(str))) if len(rows) else []
    styles = _series_style(labels)
    for label in labels:
        part = rows[rows[series].astype(str) == label].sort_values(x)
        st = styles[label]
        fig.add_trace(
            go.Scatter(
                x=part[x],
                y=part["value"],
                mode="lines+markers",
                name=esc(label),
                line=dict(color=st["colour"], width=2.5, dash=st["dash"]),
                marker=dict(symbol=st["symbol"], size=9, color=st["colour"]),
                customdata=printed(part),
                hovertemplate=f"<b>{esc(label)}</b><br>{x_title}: %{{x:,}}<br>{y_title}: %{{customdata}}<extra></extra>",
            )
        )
    if references is not None:
        for i, ref in enumerate(references.itertuples()):
            fig.add_hline(
                y=float(ref.value),
                line=dict(color="#555", dash="dash" if i % 2 else "dot", width=1.5),
                annotation_text=f"{ref.label}: {ref.value}",
                annotation_position="top left" if i % 2 else "bottom left",
                annotation_font=dict(size=12, color="#333"),
            )
    set_layout(fig, title, x_title, y_title, percent=False)
    if len(rows) and (pd.to_numeric(rows["value"], errors="coerce") >= 0).all():
        fig.update_yaxes(rangemode="tozero")  # from 0, as Home's and Results' curves: a dip is not magnified
    if x_format:
        fig.update_xaxes(tickformat=x_format)
    if not labels:
        _empty_note(fig, "No published values for this selection")
    return fig


def published_bars(
    rows: pd.DataFrame, x: str, series: str, *, title: str, x_title: str, y_title: str
) -> go.Figure:
    """Grouped bars of published values as printed; each bar prints its value."""
    fig = go.Figure()
    labels = list(dict.fromkeys(rows[series].astype(str))) if len(rows) else []
    colours = {label: style["colour"] for label, style in _series_style(labels).items()}
    for label in labels:
        part = rows[rows[series].astype(str) == label]
        fig.add_trace(
            go.Bar(
                x=part[x].astype(str).map(esc),
                y=part["value"],
                name=esc(label),
                marker_color=colours[label],
                text=printed(part),
                textposition="outside",
                cliponaxis=False,
                hovertemplate=f"<b>{esc(label)}</b><br>{x_title}: %{{x}}<br>{y_title}: %{{text}}<extra></extra>",
            )
        )
    set_layout(fig, title, x_title, y_title, percent=False)
    fig.update_layout(barmode="group")
    if not labels:
        _empty_note(fig, "No published values for this selection")
    return fig


# --- compare: Pareto front and paired differences (components.report.compare) ----------------------------


def _safe(text) -> str:
    """Arm labels carry model names from the store: plotly reads its text as a small HTML subset, so escape."""
    import html

    return html.escape(str(text))


# Point labels are placed, not left to chance: each label tries the places around its point in turn
# (right first: the error bars are vertical) and takes the first one that overlaps no other label, no
# marker and no edge of the plot, judged on a plot of at least LABEL_PLOT pixels (smaller than any the
# app draws, so a label that fits there fits on screen). Points closer than a marker share one label.
LABEL_PLOT = (520, 260)  # (width, height) in pixels of the smallest plot area the labels are placed for
LABEL_FONT = 15  # px: presenter mode's point labels are the largest drawn
MARKER_PX = 14
PLACES = (
    "middle right",
    "middle left",
    "top right",
    "bottom right",
    "top left",
    "bottom left",
    "top center",
    "bottom center",
)


def _label_box(place: str, x: float, y: float, text: str) -> tuple[float, float, float, float]:
    """(left, bottom, right, top) in pixels of `text` put at `place` around the point (x, y) in pixels."""
    w, h, gap = 0.62 * LABEL_FONT * len(text) + 2, LABEL_FONT * 1.25, MARKER_PX / 2 + 2
    vertical, horizontal = place.split(" ")
    if horizontal == "right":
        left = x + gap
    elif horizontal == "left":
        left = x - gap - w
    else:
        left = x - w / 2
    if vertical == "top":
        bottom = y + (gap if horizontal == "center" else 0)
    elif vertical == "bottom":
        bottom = y - h - (gap if horizontal == "center" else 0)
    else:
        bottom = y - h / 2
    return left, bottom, left + w, bottom + h


def _overlap(a, b) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def place_labels(xs, ys, texts, x_range, y_range) -> list[str]:
    """A plotly textposition for each point (data coordinates, axis ranges), so that no two labels
    overlap each other, a marker or the plot's edge on a plot of LABEL_PLOT pixels (else the least
    overlap). Empty texts take no room."""
    (x0, x1), (y0, y1) = x_range, y_range
    width, height = LABEL_PLOT
    px = [(float(x) - x0) / ((x1 - x0) or 1) * width for x in xs]
    py = [(float(y) - y0) / ((y1 - y0) or 1) * height for y in ys]
    r = MARKER_PX / 2
    markers = [(x - r, y - r, x + r, y + r) for x, y in zip(px, py, strict=True)]
    taken: list[tuple] = []
    out = []
    for i, text in enumerate(texts):
        if not text:
            out.append("middle right")
            continue
        best, cost = PLACES[0], math.inf
        for place in PLACES:
            box = _label_box(place, px[i], py[i], text)
            outside = (
                max(0.0, -box[0]) + max(0.0, box[2] - width) + max(0.0, -box[1]) + max(0.0, box[3] - height)
            ) * 100
            hit = sum(_overlap(box, o) for o in taken) + sum(
                _overlap(box, m) for j, m in enumerate(markers) if j != i
            )
            if outside + hit < cost:
                best, cost = place, outside + hit
            if cost == 0:
                break
        taken.append(_label_box(best, px[i], py[i], text))
        out.append(best)
    return out


def _groups(xs, ys, x_range, y_range) -> list[list[int]]:
    """Indices of points that fall on one spot (closer than a marker on a LABEL_PLOT plot), in order."""
    (x0, x1), (y0, y1) = x_range, y_range
    width, height = LABEL_PLOT
    pos = [
        ((float(x) - x0) / ((x1 - x0) or 1) * width, (float(y) - y0) / ((y1 - y0) or 1) * height)
        for x, y in zip(xs, ys, strict=True)
    ]
    groups: list[list[int]] = []
    for i, (x, y) in enumerate(pos):
        for g in groups:
            gx, gy = pos[g[0]]
            if abs(gx - x) < MARKER_PX * 0.75 and abs(gy - y) < MARKER_PX * 0.75:
                g.append(i)
                break
        else:
            groups.append([i])
    return groups


def cost_range(costs) -> list[float]:
    """The dollar axis: from $0 (never negative) to a little past the dearest arm ($1 when all are free)."""
    top = float(pd.to_numeric(pd.Series(costs), errors="coerce").max() or 0)
    return [0.0, top * 1.12 if top > 0 else 1.0]


ACCURACY_RANGE = [0.0, 1.04]  # accuracy from 0: a zoomed axis makes small differences look large


def arm_numbers(table: pd.DataFrame) -> dict[str, int]:
    """Each arm's number on the accuracy-cost chart and in the tables beside it: most accurate first,
    the cheaper first among equally accurate, arms without a score last."""
    if table is None or not len(table):
        return {}
    order = table.assign(
        acc_=pd.to_numeric(table["accuracy"], errors="coerce"),
        cost_=pd.to_numeric(table["cost_per_1000_usd"], errors="coerce"),
    )
    order = order.sort_values(["acc_", "cost_", "label"], ascending=[False, True, True], na_position="last")
    return {label: i + 1 for i, label in enumerate(order["label"])}


def _at_reference(data: pd.DataFrame, reference: str | None) -> tuple[pd.DataFrame, str]:
    """Arms that all run free, priced at `reference`'s list price from their token counts (the verdict
    words their saving at the same price): (the arms with `cost` and `dominated` at that price, the axis
    note); unchanged, with a note that they are free, where there is no reference price."""
    from components.report import compare  # the same layer: the one price rule

    if not reference or compare.price_for(reference)[1] is None:
        return data, " (every arm runs free here: a local model)"
    cost = [
        compare.cost_per_1000(i, o, reference)
        for i, o in zip(data["input_tokens_per_question"], data["output_tokens_per_question"], strict=True)
    ]
    priced = data.assign(cost=pd.to_numeric(pd.Series(cost, index=data.index), errors="coerce"))
    if priced["cost"].isna().any():
        return data, " (every arm runs free here: a local model)"
    priced = priced.assign(cost_per_1000_usd=priced["cost"])
    priced = priced.assign(dominated=compare.dominated(priced))
    name = reference.partition(":")[2] or reference
    return priced, f" at {name} list prices, for reference (every arm runs free here)"


def pareto(
    table: pd.DataFrame,
    *,
    title: str = "Accuracy against cost per 1,000 questions",
    reference: str | None = "openai:gpt-4o-mini",
) -> go.Figure:
    """One point per arm (accuracy ± Wilson 95% against dollars per 1,000 questions), both axes from 0,
    each point labelled with the arm's number (`arm_numbers`: the legend and the tables beside the chart
    name it in full); arms on one spot share one point and one label ("1, 3"), labels placed apart
    (`place_labels`). The front is joined and coloured, dominated arms are grey. `table` is compare.arms()."""
    fig = go.Figure()
    x_title = "dollars per 1,000 questions"
    data = table[(table["n"] > 0) & table["cost_per_1000_usd"].notna()] if len(table) else table
    if data.empty:
        _empty_note(fig, "No arm with scored trials and a known price" if len(table) else "Choose arms")
        return set_layout(fig, title, x_title, "accuracy")
    numbers = arm_numbers(table)
    data = data.assign(cost=pd.to_numeric(data["cost_per_1000_usd"]), number=data["label"].map(numbers))
    data = data.sort_values("number")
    free = bool((data["cost"] == 0).all())
    if free:  # one cost, $0, tells the arms nothing: their tokens at a reference price do
        data, note = _at_reference(data, reference)
        x_title += note
    x_range = cost_range(data["cost"])
    front = data[~data["dominated"]].sort_values("cost")
    if len(front) > 1:
        fig.add_trace(
            go.Scatter(
                x=front["cost"],
                y=front["accuracy"],
                mode="lines",
                name="Pareto front",
                line=dict(color="#0072B2", width=1.5, dash="dot"),
                hoverinfo="skip",
            )
        )
    styles = _series_style(list(data["label"]))
    rows = list(data.itertuples())
    groups = _groups([r.cost for r in rows], [r.accuracy for r in rows], x_range, ACCURACY_RANGE)
    texts = {g[0]: ", ".join(str(rows[i].number) for i in g) for g in groups}
    shown = [texts.get(i, "") for i in range(len(rows))]
    places = place_labels([r.cost for r in rows], [r.accuracy for r in rows], shown, x_range, ACCURACY_RANGE)
    together = {i: g for g in groups for i in g}
    for i, r in enumerate(rows):
        grey = bool(r.dominated)
        colour = DOMINATED if grey else styles[r.label]["colour"]
        same = [rows[j] for j in together[i] if j != i]
        also = (
            ("<br>on the same spot: " + ", ".join(f"{o.number} {_safe(o.label)}" for o in same))
            if same
            else ""
        )
        fig.add_trace(
            go.Scatter(
                x=[r.cost],
                y=[r.accuracy],
                mode="markers+text",
                text=[shown[i]],
                textposition=places[i],
                textfont=dict(color="#555" if grey else "#222", size=13),
                cliponaxis=False,
                name=f"{r.number} {_safe(r.label)}" + (" (dominated)" if grey else ""),
                marker=dict(
                    size=MARKER_PX,
                    color=colour,
                    symbol=styles[r.label]["symbol"],
                    line=dict(width=1, color="#444"),
                ),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=[r.hi - r.accuracy],
                    arrayminus=[r.accuracy - r.lo],
                    color=colour,
                    thickness=1.2,
                ),
                customdata=[[r.n, r.lo, r.hi]],
                hovertemplate=(
                    f"<b>{r.number} {_safe(r.label)}</b><br>$%{{x:,.4f}} per 1,000 questions"
                    "<br>accuracy: %{y:.1%}<br>95% CI: %{customdata[1]:.1%} – %{customdata[2]:.1%}"
                    "<br>n = %{customdata[0]}"
                    + also
                    + ("<br>dominated: another arm is as accurate for less" if grey else "")
                    + "<extra></extra>"
                ),
            )
        )
    set_layout(fig, title, x_title, "accuracy")
    fig.update_xaxes(tickprefix="$", tickformat=",.4~f", range=x_range, autorange=False, ticklabelstandoff=4)
    fig.update_yaxes(range=ACCURACY_RANGE, autorange=False, ticklabelstandoff=8)  # "0%" clear of "$0"
    fig.update_layout(legend_title_text="Arms by number:")
    return fig


def position_differences(
    table: pd.DataFrame, a: str, b: str, *, x: str = "position", x_title: str = "answer position"
) -> go.Figure:
    """Paired difference acc(a) - acc(b) per answer position with its 95% interval (compare.by_position)."""
    fig = go.Figure()
    title = f"Difference by position: {_safe(a)} minus {_safe(b)}"
    if table.empty:
        _empty_note(fig, "No matched trials for this pair")
        return set_layout(fig, title, x_title, "difference in accuracy")
    t = table.sort_values(x)
    fig.add_hline(y=0, line=dict(color="#888", width=1))
    fig.add_trace(
        go.Scatter(
            x=t[x],
            y=t["diff"],
            mode="lines+markers",
            name="difference (matched trials)",
            line=dict(color="#D55E00", width=2.5),
            marker=dict(size=9),
            error_y=dict(
                type="data", symmetric=False, array=t["hi"] - t["diff"], arrayminus=t["diff"] - t["lo"]
            ),
            customdata=t[["n_matched", "lo", "hi", "p_value"]].to_numpy(),
            hovertemplate=(
                x_title + ": %{x}<br>difference: %{y:+.1%}<br>95% CI: %{customdata[1]:+.1%} – "
                "%{customdata[2]:+.1%}<br>exact McNemar p = %{customdata[3]:.3g}<br>"
                "matched trials: %{customdata[0]}<extra></extra>"
            ),
        )
    )
    set_layout(fig, title, x_title, "difference in accuracy", percent=False)
    fig.update_yaxes(tickformat="+.0%", range=[-1.05, 1.05])
    return fig


# --- one theme for every chart: normal and presenter mode, and the toolbar's image export ---------

OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]
# what the app's text calls each colour it draws: words that name a colour are read from here, so the
# words and the charts cannot disagree (Okabe & Ito's names, "vermillion" said as red-orange)
COLOUR_WORDS = {
    "#0072B2": "blue",
    "#D55E00": "red-orange",
    "#009E73": "green",
    "#CC79A7": "pink",
    "#E69F00": "amber",
    "#56B4E9": "sky-blue",
    "#000000": "black",
    "#F0E442": "yellow",
    "#A6A6A6": "grey",
    "#B0B0B0": "grey",
}
DOMINATED = "#B0B0B0"  # an arm another arm beats on accuracy and cost (accuracy_vs_cost)


def colour_word(hex_colour: str) -> str:
    """The word the app's text uses for a colour it draws ('#E69F00' -> 'amber')."""
    return COLOUR_WORDS[hex_colour.upper()]


PRESENTER = dict(font=18, ticks=16, legend=16, title=22, line=3.5, marker=12)
NORMAL = dict(font=14, ticks=13, legend=13, title=17, line=None, marker=None)
INK = "#1f1f1f"  # dark text: grey text on white is hard to read on a projector


def _group(trace) -> str:
    return str(getattr(trace, "legendgroup", None) or getattr(trace, "name", None) or "")


def theme(fig: go.Figure, presenter: bool = False, series: bool = True) -> go.Figure:
    """The app's chart theme, in place: dark text of at least 13 px (presenter: 16 px ticks and
    legend, 18 px labels). Colours, dashes and markers are the builders' (the registries' colours, the
    same in both modes); presenter mode with `series` draws the lines thicker and the markers larger,
    so they stay apart on a projector. The prompt map passes series=False (its colours name region
    kinds)."""
    size = PRESENTER if presenter else NORMAL
    fig.update_layout(
        font=dict(size=size["font"], color=INK),
        title_font=dict(size=size["title"], color=INK),
        legend_font=dict(size=size["legend"], color=INK),
        hoverlabel=dict(font_size=size["ticks"]),
        paper_bgcolor="white",
    )
    fig.update_xaxes(
        tickfont=dict(size=size["ticks"], color=INK), title_font=dict(size=size["font"], color=INK)
    )
    fig.update_yaxes(
        tickfont=dict(size=size["ticks"], color=INK), title_font=dict(size=size["font"], color=INK)
    )
    fig.update_annotations(font_size=size["ticks"])
    if presenter:
        fig.update_layout(margin=dict(l=80, r=30, t=70, b=60))
    if not (presenter and series):
        return fig
    line, marker = float(PRESENTER["line"]), float(PRESENTER["marker"])
    for t in fig.data:
        if getattr(t, "type", "") != "scatter" or _group(t).startswith("ref:"):
            continue  # reference lines keep their look
        if getattr(t, "fill", None) == "toself" or "lines" not in str(t.mode or "lines"):
            if "markers" in str(t.mode or "") and isinstance(t.marker.size, int | float):
                t.marker.size = max(float(t.marker.size), marker)
            continue
        published = str(t.line.dash or "") == "dot" or str(t.name or "").startswith("published")
        t.line.width = 2.5 if published else line
        if "markers" in str(t.mode or "lines+markers"):
            t.marker.size = max(float(t.marker.size or 0), marker)
    return fig


def export_config(name: str, fmt: str = "png") -> dict:
    """Plotly config for a chart: the toolbar's camera button saves `<name>.<fmt>` (png or svg),
    drawn in the browser (no server-side image library needed)."""
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in str(name)).strip("-") or "chart"
    fmt = fmt if fmt in ("png", "svg") else "png"
    return {
        "displaylogo": False,
        "toImageButtonOptions": {
            "format": fmt,
            "filename": f"litm-{safe}",
            "scale": 2 if fmt == "png" else 1,
        },
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }


def mini_curve(rows: list[dict], *, x_title: str, title: str = "") -> go.Figure:
    """The Playground's "run at 5 positions": one question, correct (1) or wrong (0) at each place.
    Runs whose retrieval was just the first pages in order are drawn hollow."""
    fig = go.Figure()
    scored = [r for r in rows if r.get("correct") is not None]
    if scored:
        fig.add_trace(
            go.Scatter(
                x=[r["label"] for r in scored],
                y=[1 if r["correct"] else 0 for r in scored],
                mode="lines+markers",
                name="this question",
                line=dict(color=OKABE_ITO[0], width=2.5),
                marker=dict(
                    size=14,
                    color=OKABE_ITO[0],
                    symbol=["circle-open" if r.get("first_pages") else "circle" for r in scored],
                ),
                customdata=[
                    [r.get("gold_token") or 0, html.escape(str(r.get("answer") or "")[:80])] for r in scored
                ],
                hovertemplate="gold page at %{x} (token %{customdata[0]:,})<br>answer: %{customdata[1]}<extra></extra>",
            )
        )
    set_layout(fig, title, x_title, "correct", percent=False)
    fig.update_yaxes(tickvals=[0, 1], ticktext=["wrong", "correct"], range=[-0.2, 1.2])
    fig.update_xaxes(type="category")
    fig.update_layout(height=320, showlegend=False)
    if not scored:
        _empty_note(fig, "No scored run: give a gold answer")
    return fig


# --- the likelihood curve: one question's line and the mean over questions with its band ----------

LIKELIHOOD_Y_TITLE = (
    "log-probability (nats)"  # of the right answer; closer to 0: the model finds it more likely
)


def likelihood_curve(
    first: list[tuple[str, float]] | None,
    mean: pd.DataFrame | None,
    *,
    x_title: str,
    title: str,
    x: str = "gold_index",
    labels: dict | None = None,
    first_name: str = "this question",
    mean_name: str = "mean over questions",
    legend: bool = True,
    categories: list[str] | None = None,
    model: str = "",
) -> go.Figure:
    """Answer log-probability by position: one question's line (`first`: (label, value) pairs) and/or
    the mean over questions with its 95% band (`mean`: report.likelihood.points' table, `x` its position
    column; `labels` maps a position to its label); `categories`: every place on the x axis, in order
    (a stopped run shows the places not scored yet); `model`: whose curves, drawn in its colour (the
    mean solid, the one question dashed and hollow)."""
    colour = model_colour(model) if model else None
    blue, orange = (colour, colour) if colour else (OKABE_ITO[0], OKABE_ITO[1])
    fig = go.Figure()
    labels = labels or {}
    if mean is not None and not mean.empty:
        xs = [labels.get(v, str(v)) for v in mean[x]]
        if mean["low"].notna().all():
            fig.add_trace(
                go.Scatter(
                    x=xs + xs[::-1],
                    y=list(mean["high"]) + list(mean["low"])[::-1],
                    fill="toself",
                    mode="lines",
                    fillcolor=rgba(orange, 0.15),
                    line=dict(width=0),
                    hoverinfo="skip",
                    name="95% interval",
                    legendgroup="mean",
                    showlegend=False,
                )
            )
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=list(mean["mean"]),
                mode="lines+markers",
                name=mean_name,
                legendgroup="mean",
                line=dict(color=orange, width=3),
                marker=dict(size=11, color=orange),
                customdata=np.c_[mean["low"], mean["high"], mean["n"]],
                hovertemplate="%{x}: %{y:.2f} nats (95% %{customdata[0]:.2f} to "
                "%{customdata[1]:.2f}), n=%{customdata[2]}<extra></extra>",
            )
        )
    if first:
        fig.add_trace(
            go.Scatter(
                x=[a for a, _ in first],
                y=[b for _, b in first],
                mode="lines+markers",
                name=first_name,
                legendgroup="first",
                line=dict(color=blue, width=2.5, dash="dash" if colour else "solid"),
                marker=dict(size=12, symbol="circle-open" if colour else "circle"),
                hovertemplate="%{x}: %{y:.2f} nats<extra></extra>",
            )
        )
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left"),
        template="plotly_white",
        height=320,
        showlegend=legend,
        margin=dict(l=70, r=20, t=60, b=40),
        hovermode="closest",
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0),
    )
    fig.update_xaxes(title_text=x_title, type="category", showline=True, linecolor="#888")
    if categories:  # every place on the axis, scored or not yet
        fig.update_xaxes(categoryorder="array", categoryarray=categories, range=[-0.5, len(categories) - 0.5])
    fig.update_yaxes(title_text=LIKELIHOOD_Y_TITLE, showline=True, linecolor="#888", zeroline=False)
    return fig
