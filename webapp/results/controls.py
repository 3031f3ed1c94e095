"""Results' controls: the filters (sweeps, models, strategies, task sets, metric), the numbers of the
selection, and the list of sweeps (a click selects one)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.services import analysis, stores
from webapp.services.names import count, model_title, strategy_label
from webapp.session import State
from webapp.ui import pickers
from webapp.ui.render import thousands, usd

# every metric the store keeps, with where it comes from (core.metrics: the one list)
METRIC_HELP = "; ".join(f"{m.label}: {m.source}" for m in analysis.METRICS.values())


def filters(trials: pd.DataFrame, sweeps: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    with st.container():  # inside the page's "Filters" expander
        c1, c2, c3 = st.columns([3, 2, 2])
        sweep_labels = dict(zip(sweeps["sweep_key"], sweeps["label"], strict=True))
        have = stores.with_trials(sweeps, trials)
        chosen = pickers.multi(
            c1,
            "Sweeps",
            have,
            State.res_sweeps,
            format_func=lambda k: sweep_labels.get(k, k),
            placeholder="all sweeps",
        )
        part = trials[trials["sweep_key"].isin(chosen)] if chosen else trials
        models = pickers.multi(
            c2,
            "Models",
            sorted(part["model"].dropna().astype(str).unique()),
            State.res_models,
            format_func=lambda m: model_title(m) or m,  # raw ids in the URL, names on screen
            placeholder="all models",
        )
        strategies = pickers.multi(
            c3,
            "Strategies",
            sorted(part["strategy"].dropna().astype(str).unique()),
            State.res_strategies,
            format_func=strategy_label,
            placeholder="all strategies",
        )
        c4, c5 = st.columns([3, 4])
        task_sets = sorted(x for x in part["task_set"].dropna().astype(str).unique() if x)
        chosen_sets = (
            pickers.multi(c4, "Task sets", task_sets, State.res_task_sets, placeholder="all task sets")
            if task_sets
            else []
        )
        metrics = [
            m for m in analysis.LABELS if m in part and pd.to_numeric(part[m], errors="coerce").notna().any()
        ]
        metric = pickers.select(
            c5,
            "Metric",
            metrics or ["primary"],
            State.res_metric,
            default="primary",
            format_func=lambda m: analysis.LABELS.get(m, m),
            help=METRIC_HELP,
        )
    part = analysis.filter_trials(part, model=models, strategy=strategies, task_set=chosen_sets)
    return part, metric


def summary(df: pd.DataFrame, metric: str) -> None:
    errors = int(analysis.is_error(df).sum())
    n = len(analysis.scored(df, metric))
    cols = st.columns(6)
    cols[0].metric("Trials", thousands(len(df)))
    cols[1].metric("Scored", thousands(n), help=f"trials with a {analysis.LABELS.get(metric, metric)} value")
    cols[2].metric("Errors (not scored)", thousands(errors))
    cols[3].metric("LLM calls", thousands(pd.to_numeric(df["calls"], errors="coerce").sum()))
    tokens = (
        pd.to_numeric(df["input_tokens"], errors="coerce").sum()
        + pd.to_numeric(df["output_tokens"], errors="coerce").sum()
    )
    cols[4].metric(
        "Tokens in + out",
        thousands(tokens) if tokens < 1e6 else f"{tokens / 1e6:,.2f} M",
        help=f"{thousands(tokens)} tokens",
    )  # a seven-digit count is cut off in a sixth of the page
    cost = pd.to_numeric(df["cost_usd"], errors="coerce")
    cols[5].metric(
        "Dollars",
        usd(float(cost.sum())) if cost.notna().any() else "unknown",
        help="priced at the run's date; unknown where the model has no price",
    )
    if errors:
        st.warning(
            f"{count(errors, 'trial')} ended in an error and {'is' if errors == 1 else 'are'} not scored: see the **Errors** tab.",
            icon=":material/error:",
        )
    weak = analysis.first_pages_mask(df)
    if weak.any():
        hits = int((pd.to_numeric(df.loc[weak, "page_recall"], errors="coerce") > 0).sum())
        retrieving = int(df["retrieved_pages"].map(lambda v: isinstance(v, list | tuple)).sum())
        st.warning(
            f"{int(weak.sum())} of {count(retrieving, 'retrieval trial')} returned just the first pages in order "
            f"(1, 2, 3, …), what a weak model answers to any question; {hits} of them count as a page hit "
            "only because the gold page was among those first pages.",
            icon=":material/warning:",
        )


def _pick_sweep() -> None:
    """A click on a row of the sweeps list selects that sweep (it becomes the Sweeps filter)."""
    key = pickers.picked_row(State.res_sweep_table.value, State().res_sweep_keys)
    if key is not None:
        State().res_sweeps = [key]


def sweeps_list(sweeps: pd.DataFrame) -> None:
    with st.expander(f"Sweeps in the run stores ({len(sweeps)}): click a row to show that sweep"):
        show = sweeps[["label", "status", "task_set", "models", "date", "settings", "trials", "store"]]
        State().res_sweep_keys = list(sweeps["sweep_key"])
        st.dataframe(
            show,
            hide_index=True,
            key=State.res_sweep_table.key,
            on_select=_pick_sweep,
            selection_mode="single-row",
        )
