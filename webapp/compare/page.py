"""Compare: two or more arms (strategy x parameters x model) side by side, from any store: accuracy with
n and a Wilson interval, cost per 1,000 questions, paired differences with an exact McNemar p-value and
its Holm adjustment over the pairs shown, the Pareto front, a one-line verdict (non-inferiority within a
margin the user sets, a minimum saving) then its reasoning, a planner, failures side by side, a link to
this view and a one-file report. It opens on this browser's latest sweep and its arms (else on the shipped
run Home's Decide opens: Baseline, Reprompt and R&R); the planner opens on
the pair the recommendation names. The statistics are services.analysis; the helpers compare/parts.py; the
page's sections controls.py, tables.py, plots.py and planning.py."""

from __future__ import annotations

from functools import partial

import streamlit as st

from webapp import session
from webapp.compare import multiq, parts
from webapp.compare.controls import choose, decision_rule, open_on_my_latest, pricing_controls
from webapp.compare.planning import pick_pair, planner
from webapp.compare.plots import charts_section
from webapp.compare.tables import failures, tables, verdict_box
from webapp.services import analysis, sharing
from webapp.session import State, url
from webapp.ui import charts
from webapp.ui.render import guard, md


def main() -> None:
    state = session.start("compare")
    st.title("Compare")
    if not state.present:
        st.caption(
            "Choose two or more arms (strategy × parameters × model) from any run store. Trials are paired "
            "on task and cell, so the test is McNemar's exact test on the pairs the arms answered differently."
        )
    trials, sweeps, problems = sharing.load_runs()
    for p in problems:
        st.warning(f"Could not read a run store: {md(p)}")
    if trials.empty:
        st.info("No runs yet: run a sweep on the **Experiments** page, or import runs on **Results**.")
        return
    open_on_my_latest(trials, sweeps)
    top, body, bottom = st.container(), st.container(), st.container()
    with top if not state.present else bottom:  # presenter mode: the chart first, the choices folded under it
        with st.expander("Arms, sweeps and prices", expanded=not state.present):
            t, labels = choose(trials, sweeps)
            price_model, batch = pricing_controls()
        margin, min_saving = decision_rule(
            st.expander("Decision rule: margin and minimum saving") if state.present else st.container()
        )
    if len(labels) < 2:
        with body:
            st.info("Choose at least two arms to compare.")
        url.link("compare")
        return
    result = analysis.compare(
        t,
        labels,
        price_model=price_model,
        batch=batch,
        prices=parts.session_prices(),
        difference=float(state.cmp_difference or 5) / 100,
        margin=margin,
        min_saving=min_saving,
    )
    with body:
        if state.present:
            charts_section(t, result, labels)
        verdict_box(result)
        tables(result)
        multiq.section(t, labels)  # multi-question arms: accuracy and categories by K, the paper's counts
        if not state.present:
            charts_section(t, result, labels)
        pair = pick_pair(labels, result)
        if pair:
            with guard("the differences"):
                charts.show(
                    parts.differences(t, *pair),
                    "compare-differences",
                    "above zero the first arm is "
                    "more accurate at that position, over the same (matched) trials; bars are 95% intervals.",
                    series=False,
                    note=parts.note(t, list(pair)),
                )
            with st.expander(
                "Planner: how many tasks to tell a difference apart", expanded=not state.present
            ):
                planner(result, pair)
            with st.expander("Failures only: both answers side by side"):
                failures(t, pair)
    with bottom:
        link = url.link("compare")
        with st.expander("Link to this view and the report", expanded=not state.present):
            st.markdown("**Link to this view** (copy it with the button at the right of the box)")
            st.code(link, language=None, wrap_lines=True)
            sources = (
                sorted(set(t[t["arm"].isin(labels)]["sweep_label"].dropna().astype(str)))
                if "sweep_label" in t
                else []
            )
            with guard("the report"):
                # made on click (data as a callable): the report inlines plotly.js and reads the failures' texts
                st.download_button(
                    "Download report (one HTML file)",
                    partial(parts.report, result, pair, sources, parts.session_prices()),
                    file_name="litm-compare-report.html",
                    mime="text/html",
                    key=State.cmp_report.key,
                    icon=":material/download:",
                    on_click="ignore",
                )


with guard("the Compare page"):
    main()
