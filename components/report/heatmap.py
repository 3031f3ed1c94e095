"""The length x position heatmap in the needle-in-a-haystack convention: context length on x, depth (where
the gold answer sits, 0% at the top) on y, accuracy from dark blue (0%) to yellow (100%; the one scale of
every heatmap, colours.HEATMAP_SCALE, colour-blind safe), one panel per arm, the model named in the
title. Each cell prints its accuracy and n; its hover adds the 95% Wilson interval.

Depth: for a sweep by tokens, the answer's position as a share of the document (a fraction as stored, or
a token position over the document's length, in whole percent); for a LITM sweep (N documents), the gold
document's index (0 = first) and the number of documents on x. Pure plotly, no streamlit."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from components.core.cells import BY_TOKENS, Layout, layout_of
from components.core.stats import proportion_ci
from components.report.analysis import is_error, position_kind
from components.report.colours import HEATMAP_SCALE
from components.report.sweeps import model_name, with_setting
from components.report.theme import esc

PANELS_PER_ROW = 3
PANEL_HEIGHT = 300  # px per row of panels


def depth_of(trials: pd.DataFrame) -> pd.Series:
    """Each trial's depth: whole percent of the document (tokens layout) or the gold index (documents)."""
    if layout_of(trials).by_documents:
        return pd.to_numeric(trials["gold_index"], errors="coerce")
    pos = pd.to_numeric(trials["position"], errors="coerce")
    if position_kind(trials) == "fraction":
        return (100 * pos).round()
    length = pd.to_numeric(trials["length"], errors="coerce")
    return (100 * pos / length.where(length > 0)).round()


def cells(trials: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row per (arm, model, x, depth): n scored trials, their mean (accuracy), the Wilson 95% interval
    (lo, hi) and the failed trials (errors, not scored). `arm` is the strategy with its parameters
    (report.sweeps.setting_label); x the document length in tokens, or the number of documents."""
    columns = ["arm", "model", "x", "depth", "n", "mean", "lo", "hi", "errors"]
    if trials.empty or metric not in trials:
        return pd.DataFrame(columns=columns)
    t = with_setting(trials).rename(columns={"setting": "arm"})
    docs = layout_of(t).by_documents
    t = t.assign(
        x=pd.to_numeric(t["documents" if docs else "length"], errors="coerce"),
        depth=depth_of(t),
        model=t["model"].map(model_name),
        value=pd.to_numeric(t[metric], errors="coerce").where(~is_error(t)),
        failed=is_error(t),
    ).dropna(subset=["x", "depth"])
    rows = []
    for (arm, model, x, depth), g in t.groupby(["arm", "model", "x", "depth"], sort=True):
        values = g["value"].dropna()
        n = len(values)
        mean = float(values.mean()) if n else math.nan
        lo, hi = (
            proportion_ci(float(values.sum()), n, empty=(math.nan, math.nan)) if n else (math.nan, math.nan)
        )
        rows.append([arm, model, int(x), float(depth), n, mean, lo, hi, int(g["failed"].sum())])
    return pd.DataFrame(rows, columns=columns)


def _depth_text(depth: float, docs: bool) -> str:
    return f"{int(depth)}" if docs else f"{int(depth)}%"


def figure(
    table: pd.DataFrame,
    *,
    layout: Layout = BY_TOKENS,
    metric_label: str = "accuracy",
    title: str = "",
    note: str = "",
) -> go.Figure:
    """The panels of `table` (from `cells`): one heatmap per arm (and model, where several ran), length on
    x, depth on y (0 at the top), dark blue (0%) to yellow (100%), each cell printing its accuracy and n.
    `layout`: the trials' (core.cells.layout_of): BY_DOCUMENTS for a LITM sweep, else BY_TOKENS."""
    docs = layout.by_documents
    x_title = "documents in the context (N)" if docs else "context length (tokens)"
    y_title = "gold document's index (0 = first)" if docs else "depth: where the answer sits (0% = top)"
    models = sorted(set(table["model"])) if len(table) else []
    panels = list(dict.fromkeys(zip(table["arm"], table["model"], strict=True))) if len(table) else []
    if not title:
        title = f"{metric_label[:1].upper()}{metric_label[1:]} by context length and depth" + (
            f" · {', '.join(models)}" if models else ""
        )
    if not panels:
        fig = go.Figure()
        fig.add_annotation(
            text="No scored trials for this selection",
            x=0.5,
            y=0.5,
            xref="paper",
            yref="paper",
            showarrow=False,
            font=dict(size=16, color="#555"),
        )
        fig.update_layout(title=dict(text=esc(title), x=0, xanchor="left"), height=PANEL_HEIGHT)
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
        return fig
    ncols = min(PANELS_PER_ROW, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    names = [esc(arm if len(models) == 1 else f"{arm} · {model}") for arm, model in panels]
    fig = make_subplots(
        rows=nrows,
        cols=ncols,
        subplot_titles=names,
        shared_yaxes=True,
        horizontal_spacing=0.06,
        vertical_spacing=min(0.25, 0.5 / nrows),
    )
    xs = sorted(set(table["x"]))
    depths = sorted(set(table["depth"]))
    x_labels = [f"{v:,}" for v in xs]
    y_labels = [_depth_text(d, docs) for d in depths]
    for i, (arm, model) in enumerate(panels):
        part = table[(table["arm"] == arm) & (table["model"] == model)]
        z, text, custom = [], [], []
        for d in depths:
            zr: list[float | None] = []
            tr: list[str] = []
            cr: list[list[float]] = []
            for x in xs:
                hit = part[(part["x"] == x) & (part["depth"] == d)]
                if hit.empty or not hit["n"].iloc[0]:
                    errors = int(hit["errors"].iloc[0]) if len(hit) else 0
                    zr.append(None)
                    tr.append(f"{errors} failed" if errors else "")
                    cr.append([0, math.nan, math.nan, errors])
                    continue
                r = hit.iloc[0]
                zr.append(float(r["mean"]))
                tr.append(f"{r['mean']:.0%}<br>n={int(r['n'])}")
                cr.append([int(r["n"]), float(r["lo"]), float(r["hi"]), int(r["errors"])])
            z.append(zr)
            text.append(tr)
            custom.append(cr)
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=x_labels,
                y=y_labels,
                text=text,
                texttemplate="%{text}",
                colorscale=HEATMAP_SCALE,
                zmin=0,
                zmax=1,
                xgap=2,
                ygap=2,
                showscale=i == 0,
                colorbar=dict(title=dict(text=esc(metric_label)), tickformat=".0%"),
                customdata=custom,
                name=names[i],
                hovertemplate=(
                    f"<b>{names[i]}</b><br>{x_title}: %{{x}}<br>{y_title}: %{{y}}<br>{esc(metric_label)}: "
                    "%{z:.1%} (n=%{customdata[0]}, 95% CI %{customdata[1]:.0%}–%{customdata[2]:.0%})"
                    "<br>failed: %{customdata[3]}<extra></extra>"
                ),
            ),
            row=i // ncols + 1,
            col=i % ncols + 1,
        )
    fig.update_xaxes(type="category", title_text=x_title, row=nrows)
    fig.update_yaxes(type="category", autorange="reversed", categoryorder="array", categoryarray=y_labels)
    for r in range(1, nrows + 1):
        fig.update_yaxes(title_text=y_title, row=r, col=1)
    fig.update_layout(
        title=dict(text=esc(title), x=0, xanchor="left"),
        height=140 + PANEL_HEIGHT * nrows,
        margin=dict(l=80, r=40, t=110, b=70),
        font=dict(size=13),
        plot_bgcolor="#f4f4f4",
    )
    if note:
        fig.update_layout(title_subtitle_text=esc(note), title_subtitle_font=dict(size=12, color="#333"))
    return fig


def heatmap(
    trials: pd.DataFrame, metric: str, *, metric_label: str = "accuracy", note: str = ""
) -> go.Figure:
    """`figure(cells(trials, metric))`: the NIAH heatmap of a selection of trials."""
    return figure(cells(trials, metric), layout=layout_of(trials), metric_label=metric_label, note=note)
