"""Results' Accuracy vs cost and Accuracy vs length tabs."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.results.ucurve import (
    SERIES,
    fmt_table,
    with_names,
)
from webapp.services import analysis, figures, models
from webapp.services.analysis import models_of
from webapp.session import State
from webapp.ui import charts, pickers
from webapp.ui.render import md, upper_first


def reference_priced(table: pd.DataFrame) -> pd.DataFrame:
    """The cost table with its dollars at the reference model's list price (services.analysis
    REFERENCE_MODEL): what trials that ran free (a local model) would cost through an API."""
    out = table.copy()
    per = [
        analysis.cost_per_1000(i, o, analysis.REFERENCE_MODEL)
        for i, o in zip(out["input_tokens_per_trial"], out["output_tokens_per_trial"], strict=True)
    ]
    out["cost_usd_per_trial"] = [float("nan") if c is None else c / 1000 for c in per]
    out["cost_usd_total"] = out["cost_usd_per_trial"] * out["trials"]
    return out


def cost_tab(df: pd.DataFrame, metric: str, metric_label: str) -> None:
    table = analysis.cost_table(df, metric)
    paid = (
        pd.to_numeric(table.get("cost_usd_per_trial"), errors="coerce")
        if len(table)
        else pd.Series(dtype=float)
    )
    free = bool(len(paid)) and bool((paid.fillna(0) == 0).all())
    note = ""
    if free:  # every trial ran free: say so, and offer a reference price up front
        ref = analysis.REFERENCE_MODEL
        c1, c2 = st.columns([3, 1], vertical_alignment="center")
        c1.caption(
            f"Every trial here ran free (a local model), so every point costs $0. Their token counts "
            f"still differ: priced at **{md(ref)}**'s list price (dated {models.PRICES_DATE}) they show "
            "what each setting would cost through an API."
        )
        if pickers.toggle(
            c2,
            f"Price as {ref.partition(':')[2]}",
            State.res_cost_reference,
            default=True,
            help="dollars at this model's list price, from the stored token counts",
        ):
            table = reference_priced(table)
            note = f"at {ref.partition(':')[2]} list prices; these trials ran free"
    cost = pickers.radio(
        st,
        "Cost measure",
        list(figures.COST_TITLES),
        State.res_cost_measure,
        horizontal=True,
        format_func=lambda c: figures.COST_TITLES[c],
    )
    fig = figures.accuracy_vs_cost(
        table,
        cost,
        metric_label=metric_label,
        title=f"{upper_first(metric_label)} against {figures.COST_TITLES[cost]}",
        free_note=note if cost == "cost_usd" else "",
    )
    charts.show(
        fig,
        f"accuracy-vs-{cost}",
        "one point per strategy setting (labelled with its parameters), "
        "up is more accurate, left is cheaper; both axes start at zero; bars are 95% intervals; the best "
        "trade-offs sit top left.",
        note=f"Measured by this app with {models_of(df['model'])}: {metric_label}; "
        + (
            f"dollars {note} (from the stored tokens)."
            if note and cost == "cost_usd"
            else "cost as stored per trial."
        ),
        alt=f"{metric_label} against {figures.COST_TITLES[cost]}, one point per strategy setting",
        wide=True,
    )
    if len(table) and not table["usd_known"].all():
        st.caption(
            "Some trials have no price (an unpriced model or a failed call): their dollars are missing."
        )
    if len(table):
        show = fmt_table(
            table[
                [
                    "setting",
                    "model",
                    "n",
                    "mean",
                    "lo",
                    "hi",
                    "errors",
                    "calls_per_trial",
                    "input_tokens_per_trial",
                    "output_tokens_per_trial",
                    "cost_usd_per_trial",
                    "cost_usd_total",
                ]
            ]
        )
        show["calls_per_trial"] = table["calls_per_trial"].map(lambda v: "" if pd.isna(v) else f"{v:,.2f}")
        for c in ("input_tokens_per_trial", "output_tokens_per_trial"):
            show[c] = table[c].map(lambda v: "" if pd.isna(v) else f"{v:,.0f}")
        show["cost_usd_per_trial"] = table["cost_usd_per_trial"].map(
            lambda v: "unknown" if pd.isna(v) else analysis.money(1000 * float(v))
        )
        show["cost_usd_total"] = table["cost_usd_total"].map(
            lambda v: "unknown" if pd.isna(v) else analysis.money(v)
        )
        st.dataframe(show.rename(columns=COST_NAMES), hide_index=True, width="stretch")


COST_NAMES = {
    "calls_per_trial": "calls / question",
    "input_tokens_per_trial": "input tokens / question",
    "output_tokens_per_trial": "output tokens / question",
    "cost_usd_per_trial": "$ per 1,000 questions",
    "cost_usd_total": "$ in all",
}


def length_tab(df: pd.DataFrame, metric: str, metric_label: str) -> None:
    series = pickers.radio(st, "One line per", list(SERIES), State.res_len_series, horizontal=True)
    cols = tuple("model_name" if c == "model" else c for c in SERIES[series])
    table = analysis.by_length(
        with_names(df), metric, (*cols, *(() if "model_name" in cols else ("model_name",)), "source")
    )
    fig = figures.accuracy_vs_length(
        table, metric_label=metric_label, title=f"{upper_first(metric_label)} by document length"
    )
    charts.show(
        fig,
        "accuracy-vs-length",
        "accuracy (y) against document length (x), one line per series; "
        "shaded bands are 95% intervals; a falling line means longer documents hurt.",
        note=f"Measured by this app with {models_of(df['model'])}: {metric_label}, 95% Wilson intervals.",
        alt=f"{metric_label} against document length, one line per {series}",
        wide=True,
    )
