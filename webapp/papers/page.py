"""Papers: the place to rerun the four papers the app is built on (Lost in the Middle, R&R, ALR2, Context
Overloading in RAG Based Systems). For each, its main experiments (services/papers.py: a table of them):
what each measured, the published table beside our shipped run (n and intervals), what differs, and the
command (or the Experiments page's grid) that reruns it; then the published tables as charts, and the two
later papers' curves of LITM's NQ experiment (Found in the Middle, with its experiments beside our runs
too; Pos2Distill), and a tab of later results on current models (papers/later.py: NoLiMa, RULER, LongPiBench). Runs nothing itself."""

from __future__ import annotations

import streamlit as st

from webapp import session
from webapp.papers.later import TAB as LATER_TAB
from webapp.papers.later import later_tab
from webapp.papers.rerun import rerun_section
from webapp.papers.tables import PAPERS, VIEWS, paper_tab
from webapp.services import papers as experiments
from webapp.services import published
from webapp.ui.render import guard, md


def main() -> None:
    session.start("papers")
    st.title("Papers")
    st.write(
        "The four papers this app is built on, each with its main experiments: what it measured, its "
        "published table beside the run of ours that ships with the app (with n and 95% intervals), what "
        "differs between the two, and the command that reruns it. Then the published tables as charts, "
        "and two later papers that measured LITM's 20-document NQ curve on open models with and without "
        "their fixes (Found in the Middle with its experiments to rerun too: why the middle is lost, and "
        "two fixes that read the model's attention); the last tab, what current models show on harder "
        "tasks. Numbers marked **as "
        "published** are the papers' own, with their own metrics."
    )
    pub = published.rows()
    *tabs, later = st.tabs([*PAPERS.values(), LATER_TAB])
    with later:
        later_tab(pub)
    for tab, source in zip(tabs, PAPERS, strict=True):
        with tab:
            rows = pub[pub["source"] == source]
            rerun = bool(experiments.experiments(source))  # the four papers, and Found in the Middle
            if rerun:
                st.caption(f"**Source:** {md(experiments.citation(source))}")
                rerun_section(source)
            if source not in VIEWS:
                continue
            if rows.empty:
                st.info("No published rows for this paper.")
                continue
            if rerun:
                st.subheader("The published tables as charts")
            paper_tab(source, rows, sourced=rerun)


with guard("the Papers page"):
    main()
