"""Papers' experiments to rerun: what each measured, the published table beside our shipped run, what
differs, and the command (or the Experiments page's grid) that reruns it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.papers.tables import PAPERS
from webapp.services import multiq
from webapp.services import papers as experiments
from webapp.services.names import models_of
from webapp.session import State
from webapp.ui import charts
from webapp.ui.render import guard, md

WIDE = 130  # characters: two tables wider than this together go one above the other


def open_in_experiments(exp) -> None:
    """Hand the experiment's grid to the Experiments page (applied once there), then open it."""
    State().sweep_plan = {k: v for k, v in exp.preset.items()}
    st.switch_page("experiments/page.py")


def width(df: pd.DataFrame | None) -> int:
    """About how many characters wide a table draws: its columns' widest text, header included."""
    if df is None or df.empty:
        return 30
    return sum(max(len(str(c)), int(df[c].astype(str).str.len().max())) + 3 for c in df.columns)


def shown(df: pd.DataFrame) -> pd.DataFrame:
    """A table as text, a dash where the paper printed nothing (or a cell was not run)."""
    return df.astype("string").fillna("–").replace("", "–")


def experiment(exp) -> None:
    """One experiment: what it measured, the published table and ours side by side (one above the other
    when they are too wide for that), what differs, the command that reruns it (and the Experiments
    page's grid where that page can draw it)."""
    with st.container(border=True):
        st.markdown(f"**{md(exp.title)}**")
        st.caption(md(exp.measured))
        pub = experiments.published(exp.key)
        ours = experiments.ours(exp) if exp.run else None
        wide = width(pub) + width(ours) > WIDE
        left, right = (st.container(), st.container()) if wide else st.columns([width(pub), width(ours)])
        left.markdown(
            f"Published: {md(PAPERS[exp.paper].split(' (')[0])}, {md(', '.join(exp.tables))}"
            + ("" if pub.empty and exp.published_note else f" ({md(exp.metric)}, as printed)")
        )
        if pub.empty:
            left.info(
                md(exp.published_note or "No published rows for this experiment."), icon=":material/info:"
            )
        else:
            left.dataframe(
                shown(pub), hide_index=True, width="stretch" if wide and width(pub) > 60 else "content"
            )
        if ours is None or ours.empty:
            right.markdown("Ours")
            right.info(
                "No shipped run of this experiment yet: the command below runs it.",
                icon=":material/hourglass_empty:",
            )
        else:
            n, planned = experiments.ours_n(exp), experiments.planned(exp)
            growing = (
                f" so far (of {planned:,} planned: the run is not finished)"
                if planned and n < planned
                else ""
            )
            right.markdown(
                f"Ours: the shipped run {md(exp.run)}, {n:,} questions{growing} "
                + (
                    "(each cell: right / n = share, Wilson 95% interval)"
                    if experiments.is_accuracy(exp.ours_metric)
                    else "(each cell: the mean share, its 95% interval and the trials n)"
                )
            )
            right.dataframe(
                shown(ours), hide_index=True, width="stretch" if wide and width(ours) > 60 else "content"
            )
        categories(exp)
        st.caption(f"**What differs.** {md(exp.differs)}")
        path = experiments.config_file(exp)
        where = f"  # {path.parent.name}/{path.name}" if path is not None else ""
        st.code(exp.command + where, language="bash")
        if exp.preset:
            if st.button(
                "Open this grid in Experiments",
                key=State.paper_run(exp.key).key,
                icon=":material/science:",
                help="fills the Experiments page with this experiment's task set, strategies, "
                "parameters, lengths and positions; you choose the model there",
            ):
                open_in_experiments(exp)


def categories(exp) -> None:
    """A multi-question experiment's answers by category (Context Overloading §5.3 sorts its mismatches so):
    our shipped run's stacked bars beside the paper's hatched counts."""
    tab = experiments.mq_table(exp)
    if tab.empty:
        return
    charts.show(
        multiq.categories_figure(tab),
        f"papers-{exp.key}-categories",
        "each bar is one strategy's questions at one K, split into correct (the two-way match), partially "
        "correct (most of the gold answer's keywords), not specified and wrong; hatched bars are the "
        "paper's counts as published (its whole-context runs give only the incorrect ones: the rest is "
        "drawn as correct).",
        note=f"Measured by this app with {models_of(tab['model'])}; categories sorted by rule. Hatched: "
        f"{multiq.PAPER}, sorted by hand.",
        series=False,
        alt="answers by category, our shipped run and the paper's, by K and strategy",
    )


def rerun_section(source: str) -> None:
    st.subheader("Rerun its experiments")
    st.caption(
        "Each command runs (or resumes) the experiment into a new store, `papers.sqlite` in the "
        "current folder; add `--dry-run` to see its calls, tokens and cost first. The config named "
        "ships with the app."
    )
    for exp in experiments.experiments(source):
        with guard(f"the experiment {exp.title}"):
            experiment(exp)
    missing = experiments.not_rerun(source)
    if missing:
        st.subheader("What cannot be rerun here")
        st.markdown("\n".join(f"- **{md(what)}**: {md(why)}." for what, why in missing))
