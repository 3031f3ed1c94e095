"""Results: cached runs (your run store and the shipped ones) as U-curves, heatmaps, cost trade-offs,
per-trial drill-down and downloads, with published curves overlaid where they are comparable."""

from __future__ import annotations

import streamlit as st

from webapp import session
from webapp.results import attention as attention_view
from webapp.results import judge, multiq, research
from webapp.results.controls import filters, summary, sweeps_list
from webapp.results.cost import cost_tab, length_tab
from webapp.results.downloads import download_tab, import_section
from webapp.results.trials import errors_tab, trials_tab
from webapp.results.ucurve import (
    newest_own_sweep,
    open_on_real_curve,
    u_curve_tab,
)
from webapp.services import analysis, sharing, stores
from webapp.services import multiq as mq_service
from webapp.services.names import count
from webapp.session import State, url
from webapp.ui.render import guard, md


def empty_state(problems: list[str]) -> None:
    st.info(
        "No runs yet. Start a sweep on the **Experiments** page (a provider, a task set, lengths, "
        "positions and strategies); its trials appear here as they finish. The published curves "
        "of the papers are on the **Papers** page, no run needed.",
        icon=":material/info:",
    )
    try:
        st.page_link("experiments/page.py", label="Go to Experiments", icon=":material/science:")
    except Exception:  # not inside the app's navigation (a page run on its own)
        pass
    for p in problems:
        st.warning(f"Could not read a run store: {md(p)}")
    st.caption(f"Your run store: `{stores.user_db()}`; shipped runs: `sample_docs/runs/*.sqlite`.")
    with guard("importing runs"):
        import_section()


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
        metric_label = analysis.LABELS.get(metric, metric)
        if not state.present:
            summary(df, metric)
        multiq.section(df, metric, metric_label)  # multi-question sweeps (K contexts, K x Q questions)
        judge.section(df, sweeps)  # an LLM judge's agreement with the string metrics, where it judged
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
                        f"{count(int(multi.sum()), 'multi-question trial')} left out of this view: "
                        "they are drawn above, by K."
                    )
                    args = (df[~multi], *args[1:])
                fn(*args)
                if fn is u_curve_tab:  # the attention measure's curves, for a selection that has it
                    attention_view.section(args[0])
    if state.present:
        with bottom:
            summary(df, metric)


with guard("the Results page"):
    main()
