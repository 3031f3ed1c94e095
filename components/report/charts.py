"""Plotly figures for results and published curves. UI-free: tables in, figures out.

What a figure is drawn with lives beside it: its colours (report.colours: by strategy and model name, the
same in normal and presenter mode), its frame and theme (report.theme), where its point labels go
(report.labels). Series of one colour differ by dash and marker (10 and 20 documents), and a published
curve is dotted with hollow markers (a measured one solid or dashed with filled ones). Every accuracy
point carries n and its 95% interval in the hover text; the legend names the series with its n. Every
label that comes from data goes through `theme.esc` first (plotly renders a subset of HTML).
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from components.report.colours import (
    DOMINATED,
    PALETTE,
    PUBLISHED_SYMBOLS,
    colour_for,
    is_strategy,
    model_colour,
    rgba,
    series_style,
)
from components.report.labels import MARKER_PX, place_labels, same_spot
from components.report.sweeps import model_title, setting_parts
from components.report.theme import empty_note, esc, set_layout


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
    styles = series_style(labels)
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
        empty_note(fig, "No scored trials for this selection")
    return fig


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
        empty_note(fig, "No scored trials for this selection")
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
        empty_note(fig, "No cost recorded for this selection" if len(table) else "No scored trials")
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
    styles = series_style(labels)
    top = float(data["x_"].max() or 0)
    x_range = [0.0, top * 1.15 if top > 0 else 1.0]
    parts = [
        (label, part.sort_values("x_"))
        for (_key, part), label in zip(data.groupby(group_cols, sort=True), labels, strict=True)
    ]
    shown, places = _setting_labels(parts, x_range)
    at = 0
    for label, part in parts:
        n = len(part)
        fig.add_trace(
            _cost_trace(label, part, styles[label], shown[at : at + n], places[at : at + n], x_title)
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


def _setting_labels(parts: list, x_range: list[float]) -> tuple[list[str], list[str]]:
    """Each point's label (its parameters; settings on one spot share one label naming them all) and
    where it goes (labels.place_labels)."""
    xs = [x for _, part in parts for x in part["x_"]]
    ys = [y for _, part in parts for y in part["mean"]]
    short = [setting_parts(s)[1] for _, part in parts for s in part["setting"].astype(str)]
    shown = [""] * len(short)
    for g in same_spot(xs, ys, x_range, ACCURACY_RANGE):
        shown[g[0]] = " / ".join(dict.fromkeys(short[i] for i in g if short[i]))
    return shown, place_labels(xs, ys, shown, x_range, ACCURACY_RANGE)


def _cost_trace(
    label: str, part: pd.DataFrame, st: dict, texts: list, places: list, x_title: str
) -> go.Scatter:
    """One strategy's (and model's) settings on the accuracy-cost chart, joined in order of cost."""
    return go.Scatter(
        x=part["x_"],
        y=part["mean"],
        mode="lines+markers+text",
        text=[esc(t) for t in texts],
        textposition=places,
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
    styles = series_style(labels)
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
        empty_note(fig, "No published values for this selection")
    return fig


def token_axis(fig, values: pd.Series) -> None:
    """Ticks at the paper's own values ('4k', '8k', ...; 4096 is '4k' too), on a log axis when they double."""
    vals = sorted(int(v) for v in pd.to_numeric(values, errors="coerce").dropna().unique())
    if not vals:
        return
    wide = len(vals) > 2 and vals[0] > 0 and vals[-1] / vals[0] >= 8
    fig.update_xaxes(
        type="log" if wide else "linear",
        tickvals=vals,
        ticktext=[_k_label(v) for v in vals],
    )


def _k_label(v: int) -> str:
    """A token count as papers label it: 4000 and 4096 are both '4k'."""
    for unit in (1000, 1024):
        if v and v % unit == 0:
            return f"{v // unit}k"
    return f"{v:,}"


def published_bars(
    rows: pd.DataFrame, x: str, series: str, *, title: str, x_title: str, y_title: str
) -> go.Figure:
    """Grouped bars of published values as printed; each bar prints its value."""
    fig = go.Figure()
    labels = list(dict.fromkeys(rows[series].astype(str))) if len(rows) else []
    colours = {label: style["colour"] for label, style in series_style(labels).items()}
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
        empty_note(fig, "No published values for this selection")
    return fig


# --- compare: Pareto front and paired differences (components.report.compare) ----------------------------


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
        empty_note(fig, "No arm with scored trials and a known price" if len(table) else "Choose arms")
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
    styles = series_style(list(data["label"]))
    rows = list(data.itertuples())
    groups = same_spot([r.cost for r in rows], [r.accuracy for r in rows], x_range, ACCURACY_RANGE)
    texts = {g[0]: ", ".join(str(rows[i].number) for i in g) for g in groups}
    shown = [texts.get(i, "") for i in range(len(rows))]
    places = place_labels([r.cost for r in rows], [r.accuracy for r in rows], shown, x_range, ACCURACY_RANGE)
    together = {i: g for g in groups for i in g}
    for i, r in enumerate(rows):
        grey = bool(r.dominated)
        colour = DOMINATED if grey else styles[r.label]["colour"]
        same = [rows[j] for j in together[i] if j != i]
        also = (
            ("<br>on the same spot: " + ", ".join(f"{o.number} {esc(o.label)}" for o in same)) if same else ""
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
                name=f"{r.number} {esc(r.label)}" + (" (dominated)" if grey else ""),
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
                    f"<b>{r.number} {esc(r.label)}</b><br>$%{{x:,.4f}} per 1,000 questions"
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
    title = f"Difference by position: {esc(a)} minus {esc(b)}"
    if table.empty:
        empty_note(fig, "No matched trials for this pair")
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
                line=dict(color=PALETTE["blue"], width=2.5),
                marker=dict(
                    size=14,
                    color=PALETTE["blue"],
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
        empty_note(fig, "No scored run: give a gold answer")
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
    blue, orange = (colour, colour) if colour else (PALETTE["blue"], PALETTE["red-orange"])
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
