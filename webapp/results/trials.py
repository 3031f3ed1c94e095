"""Results' Trials and Errors tabs: the trials of the selection page by page (right, wrong or failed), one
trial's detail, and the errors."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.results.trial import trial_detail, trial_label
from webapp.services import analysis, stores
from webapp.session import State
from webapp.ui import pickers
from webapp.ui.render import guard

TRIAL_VIEW = [
    "trial_id",
    "sweep",
    "task",
    "strategy",
    "model",
    *analysis.CELL_COLUMNS,
    "actual_position",
    "answer",
    "primary",
    *analysis.METRIC_COLUMNS,  # the ones with a value in the selection are shown
    "error",
    "calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
]


ERROR_VIEW = ["trial_id", "sweep", "task", "strategy", "model", *analysis.CELL_COLUMNS, "error"]


def _pick_from_table() -> None:
    state = State()
    key = pickers.picked_row(State.res_trial_table.value, state.res_trial_keys)
    if key is not None:
        state.res_trial = key


PAGE = 500  # trials per page of the trial table: their texts are fetched from the stores page by page


OUTCOMES = {"all": "all", "right": "right", "wrong": "wrong", "failed": "failed (an error, not scored)"}


def by_outcome(df: pd.DataFrame, metric: str, outcome: str) -> pd.DataFrame:
    """The trials that were right (the metric is 1), wrong (it is below 1) or failed (an error); all for
    "all". Right and wrong apply to a 0/1 metric only."""
    if outcome == "failed":
        return df[analysis.is_error(df)]
    values = (
        pd.to_numeric(df[metric], errors="coerce")
        if metric in df
        else pd.Series(float("nan"), index=df.index)
    )
    if outcome == "right":
        return df[values >= 1]
    if outcome == "wrong":
        return df[values < 1]
    return df


def trials_tab(df: pd.DataFrame, metric: str) -> None:
    values = pd.to_numeric(df[metric], errors="coerce").dropna() if metric in df else pd.Series(dtype=float)
    binary = bool(len(values)) and bool(values.isin([0.0, 1.0]).all())
    offered = list(OUTCOMES) if binary else ["all", "failed"]
    outcome = pickers.radio(
        st,
        "Show",
        offered,
        State.res_outcome,
        horizontal=True,
        format_func=OUTCOMES.get,
        help="right: the metric is 1; wrong: below 1 (a 0/1 metric); failed: an error, not scored",
    )
    df = by_outcome(df, metric, outcome)
    if df.empty:
        st.info(f"No {OUTCOMES[outcome]} trials in this selection.")
        return
    pages = max(1, -(-len(df) // PAGE))
    if pages > 1:
        if int(State().res_trial_page or 1) > pages:  # the filters shrank the selection
            State().res_trial_page = pages
        c1, c2 = st.columns([1, 3])
        page = int(c1.number_input(f"Page (of {pages:,})", 1, pages, step=1, key=State.res_trial_page.key))
        c2.caption(
            f"{len(df):,} trials, {PAGE:,} per page: trials {(page - 1) * PAGE + 1:,}–"
            f"{min(page * PAGE, len(df)):,} shown. The Download tab exports them all."
        )
    else:
        page = 1
    view = stores.whole(df.iloc[(page - 1) * PAGE : page * PAGE])
    view["key"] = view["store"] + "#" + view["trial_id"].astype(str)
    State().res_trial_keys = list(view["key"])
    st.caption("Select a row (or pick a trial below) to see its prompt map and raw responses.")
    shown = view[[c for c in TRIAL_VIEW if c in view]].dropna(axis=1, how="all")
    st.dataframe(
        shown,
        hide_index=True,
        key=State.res_trial_table.key,
        on_select=_pick_from_table,
        selection_mode="single-row",
        height=300,
    )
    labels = {k: trial_label(r) for k, r in zip(view["key"], view.itertuples(), strict=True)}
    key = pickers.select(st, "Trial", list(labels), State.res_trial, format_func=lambda k: labels.get(k, k))
    if key is None:
        return
    with guard("the trial details"):
        trial_detail(view[view["key"] == key].iloc[0])


def errors_tab(df: pd.DataFrame) -> None:
    summary_ = analysis.error_summary(df)
    if summary_.empty:
        st.success("No errors in this selection.")
        return
    st.dataframe(summary_, hide_index=True)
    bad = df[analysis.is_error(df)]
    st.dataframe(
        bad[[c for c in ERROR_VIEW if c in bad]].dropna(axis=1, how="all"),
        hide_index=True,
    )
