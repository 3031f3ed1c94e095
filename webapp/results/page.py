"""Results: cached runs (your run store and the shipped ones) as U-curves, heatmaps, cost trade-offs,
per-trial drill-down and downloads, with published curves overlaid where they are comparable."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from webapp import session
from webapp.results import multiq, research
from webapp.results.trial import trial_detail, trial_label
from webapp.results.ucurve import (
    SERIES,
    fmt_table,
    newest_own_sweep,
    open_on_real_curve,
    u_curve_tab,
    with_names,
)
from webapp.services import analysis, figures, models, sharing, stores
from webapp.services import multiq as mq_service
from webapp.services.analysis import models_of
from webapp.services.names import model_title, strategy_label
from webapp.session import State, url
from webapp.ui import charts, pickers
from webapp.ui.render import guard, md, short, thousands, upper_first, usd


def empty_state(problems: list[str]) -> None:
    st.info(
        "No runs yet. Start a sweep on the **Experiments** page (a provider, a task set, lengths, "
        "positions and strategies); its trials appear here as they finish. The published curves "
        "of the papers are on the **Papers** page, no run needed.",
        icon=":material/info:",
    )
    try:
        st.page_link("experiments/page.py", label="Go to Experiments", icon=":material/science:")
    except Exception:  # noqa: BLE001 - not inside the app's navigation (a page run on its own)
        pass
    for p in problems:
        st.warning(f"Could not read a run store: {md(p)}")
    st.caption(f"Your run store: `{stores.user_db()}`; shipped runs: `sample_docs/runs/*.sqlite`.")
    with guard("importing runs"):
        import_section()


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
            m for m in analysis.METRICS if m in part and pd.to_numeric(part[m], errors="coerce").notna().any()
        ]
        metric = pickers.select(
            c5,
            "Metric",
            metrics or ["primary"],
            State.res_metric,
            default="primary",
            format_func=lambda m: analysis.METRICS.get(m, m),
            help="fuzzy match (R&R), best subspan EM (Lost in the Middle), exact match "
            "(ALR2), page recall/precision of the retrieval stage; where a sweep measured "
            "it, how likely the model finds the right answer (its log-probability, this "
            "app's measure)",
        )
    part = analysis.filter_trials(part, model=models, strategy=strategies, task_set=chosen_sets)
    return part, metric


def summary(df: pd.DataFrame, metric: str) -> None:
    errors = int(analysis.is_error(df).sum())
    n = len(analysis.scored(df, metric))
    cols = st.columns(6)
    cols[0].metric("Trials", thousands(len(df)))
    cols[1].metric("Scored", thousands(n), help=f"trials with a {analysis.METRICS.get(metric, metric)} value")
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
            f"{errors} trial(s) ended in an error and are not scored: see the **Errors** tab.",
            icon=":material/error:",
        )
    weak = analysis.first_pages_mask(df)
    if weak.any():
        hits = int((pd.to_numeric(df.loc[weak, "page_recall"], errors="coerce") > 0).sum())
        retrieving = int(df["retrieved_pages"].map(lambda v: isinstance(v, list | tuple)).sum())
        st.warning(
            f"{int(weak.sum())} of {retrieving} retrieval trial(s) returned just the first pages in order "
            f"(1, 2, 3, …), what a weak model answers to any question; {hits} of them count as a page hit "
            "only because the gold page was among those first pages.",
            icon=":material/warning:",
        )


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


TRIAL_VIEW = [
    "trial_id",
    "sweep",
    "task",
    "strategy",
    "model",
    "length",
    "position",
    "documents",
    "gold_index",
    "actual_position",
    "answer",
    "primary",
    "score",
    "subspan_em",
    "exact",
    "page_recall",
    "error",
    "calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
]


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
        bad[
            [
                c
                for c in ["trial_id", "sweep", "task", "strategy", "model", "length", "position", "error"]
                if c in bad
            ]
        ],
        hide_index=True,
    )


def download_tab(df: pd.DataFrame, metric: str, metric_label: str) -> None:
    research.report_button(df, metric, metric_label)
    st.write(
        f"The {len(df):,} trials of this selection, every column (errors included, with their message). "
        "The file is made when you click, from the run stores."
    )
    c1, c2 = st.columns(2)
    # data as a callable: made on click only (a 100k-trial export costs seconds, not every rerun)
    c1.download_button(
        "Download CSV",
        partial(stores.export, df, "csv"),
        file_name="litm_trials.csv",
        mime="text/csv",
        key=State.res_download("csv").key,
        icon=":material/download:",
        on_click="ignore",
    )
    c2.download_button(
        "Download Parquet",
        partial(stores.export, df, "parquet"),
        file_name="litm_trials.parquet",
        mime="application/vnd.apache.parquet",
        key=State.res_download("parquet").key,
        icon=":material/download:",
        on_click="ignore",
    )
    import_section()


def import_section() -> None:
    """Runs someone exported (the downloads above, or `litm results`/the store's export) join your store."""
    state = State()
    up = st.file_uploader(
        "Import runs someone shared (CSV, JSONL or Parquet from this app)",
        type=["csv", "jsonl", "parquet"],
        key=State.res_import.key,
    )
    if up is None or state.res_imported == up.file_id:
        return
    try:
        n, sweeps = stores.import_file(up.name, up.getvalue(), sharing.owner_tag())
    except Exception as exc:  # noqa: BLE001 - a bad file is a message, not a traceback
        st.error(f"Could not import {md(up.name)}: {md(short(exc))}", icon=":material/error:")
        return
    state.res_imported = up.file_id
    state.res_import_msg = f"Imported {n:,} trial(s) in {sweeps} sweep(s) into your run store."
    st.rerun()  # the results above now include them


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


TABS = [
    "U-curve",
    "Length × position",
    "Accuracy vs cost",
    "Accuracy vs length",
    "Trials",
    "Trials × settings",
    "Errors",
    "Download",
]


PLACED = (
    u_curve_tab,
    research.niah_tab,
    cost_tab,
    length_tab,
    research.grid_tab,
)  # views of an answer's position and a length
MULTI_LINE = (
    "Multi-question trials (many questions asked at once) have no answer position and no document "
    "length: their accuracy by K, their categories, and their calls and tokens per question are drawn "
    "above."
)


def main() -> None:
    state = session.start("results")  # a copied link, or Experiments' "See the results" (?sweep=...)
    st.title("Results")
    if state.res_import_msg:
        st.success(state.res_import_msg, icon=":material/check:")
        state.res_import_msg = ""
    research.watch()  # a store that grows (a sweep run from the command line) redraws the page
    trials, sweeps, problems = sharing.load_runs()
    if trials.empty:
        empty_state(problems)
        return
    for p in problems:
        st.warning(f"Could not read a run store: {md(p)}")
    open_on_real_curve(trials, sweeps, url.given("results"))
    research.follow(sweeps, trials, newest_own_sweep)
    top, body, bottom = st.container(), st.container(), st.container()
    with top if not state.present else bottom:  # presenter mode: the chart first, the filters folded under it
        if not state.present:
            st.caption(
                "From cached runs: your run store and the runs shipped with the app (labelled *shipped*). "
                "Every accuracy comes with n and a 95% interval; trials that failed are counted, not scored."
            )
        with st.expander("Filters: sweeps, models, strategies, metric", expanded=not state.present):
            df, metric = filters(trials, sweeps)
        sweeps_list(sweeps)
        with st.expander("Link to this view (copy it with the button at the right of the box)"):
            st.code(url.link("results"), language=None, wrap_lines=True)
    with body:
        if df.empty:
            st.info("No trials match these filters.")
            return
        metric_label = analysis.METRICS.get(metric, metric)
        if not state.present:
            summary(df, metric)
        multiq.section(df, metric, metric_label)  # multi-question sweeps (K contexts, K x Q questions)
        # only the open tab's view is computed (the others when opened): a class's default view of Results
        # costs the server its U-curve, not eight views
        tabs = st.tabs(TABS, key=State.res_tab.key, on_change="rerun")
        sections = [
            (u_curve_tab, (df, metric, metric_label)),
            (research.niah_tab, (df, metric, metric_label)),
            (cost_tab, (df, metric, metric_label)),
            (length_tab, (df, metric, metric_label)),
            (trials_tab, (df, metric)),
            (research.grid_tab, (df, metric)),
            (errors_tab, (df,)),
            (download_tab, (df, metric, metric_label)),
        ]
        multi = mq_service.is_multi(df)
        for tab, (fn, args) in zip(tabs, sections, strict=True):
            if not tab.open:
                continue
            with tab, guard(f"the {fn.__name__.removesuffix('_tab').replace('_', ' ')} view"):
                if metric == analysis.LIKELIHOOD.column and fn in (research.niah_tab, cost_tab, length_tab):
                    st.info(
                        "This view shows accuracy: pick an accuracy metric in **Filters**. The likelihood "
                        f"({analysis.LIKELIHOOD.label}) is drawn on the **U-curve** tab.",
                        icon=":material/info:",
                    )
                    continue
                if fn in PLACED and multi.any():  # K x Q questions asked at once: no position, no length
                    if multi.all():
                        st.info(MULTI_LINE, icon=":material/info:")
                        continue
                    st.caption(
                        f"{int(multi.sum()):,} multi-question trial(s) are left out of this view: "
                        "they are drawn above, by K."
                    )
                    args = (df[~multi], *args[1:])
                fn(*args)
    if state.present:
        with bottom:
            summary(df, metric)


with guard("the Results page"):
    main()
