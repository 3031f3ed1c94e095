"""The Results page's view of multi-question sweeps ("Context Overloading in RAG Based Systems", seed 004):
K SQuAD paragraphs in one document and K x Q questions asked at once. Accuracy by K and strategy with n and
95% Wilson intervals, the answers' categories as stacked bars beside the paper's §5.3 counts, calls and
tokens per question, and one table of ours and the paper's rows. Shown above the page's tabs when the
selection holds such trials (their position axis, lengths and gold indices do not apply to them)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.services import analysis, multiq
from webapp.services.names import count, models_of
from webapp.ui import charts
from webapp.ui.render import guard, md

TABS = ["Accuracy by K", "Categories", "Calls and tokens", "Table: ours and the paper's"]
ACCURACY_METRICS = ("primary", *analysis.ANSWER_COLUMNS)  # the metrics that score an answer


def how(metric: str, metric_label: str) -> tuple[str, str]:
    """(the metric column this view reads, its label): the chosen metric when it scores answers, else the
    paper's two-way substring match."""
    if metric in ACCURACY_METRICS:
        return metric, (
            "two-way substring match (Context Overloading §4.2)"
            if metric in ("primary", "mq_match")
            else metric_label
        )
    return "mq_match", "two-way substring match (Context Overloading §4.2)"


def section(df: pd.DataFrame, metric: str, metric_label: str) -> None:
    """The view, when `df` holds multi-question trials (else nothing)."""
    with guard("the multi-question view"):
        t = multiq.trials(df)
        if t.empty:
            return
        mixed = len(t) < len(df)
        # among other sweeps' trials it stays folded: the tabs below are the selection's main view
        box = (
            st.expander(
                f"Many questions at once: {count(len(t), 'multi-question trial')} in this selection",
                expanded=False,
            )
            if mixed
            else st.container()
        )
        with box:
            view(t, metric, metric_label)


def view(t: pd.DataFrame, metric: str, metric_label: str) -> None:
    column, label = how(metric, metric_label)
    tab = multiq.table(t, column)
    st.subheader("Many questions at once (Context Overloading)")
    st.caption(
        "K SQuAD paragraphs make one document and all K x Q questions are asked of it: with the whole "
        "document (mq-full), with every chunk (mq-chunked) or each with the chunk sharing most keywords "
        "with it (mq-keyword). One trial per question; a prompt's call is counted once. The paper's §5.3 "
        f"counts ({md(multiq.PAPER)}, one document per K, sorted by hand) are drawn hatched beside ours."
    )
    note = f"Measured by this app with {models_of(t['model'])}: {label}, 95% Wilson intervals."
    tabs = st.tabs(TABS)
    with tabs[0]:
        charts.show(
            multiq.accuracy_figure(tab, label),
            "mq-accuracy",
            "one bar per strategy at each number of contexts K (Q questions each); the label is correct "
            "of n, the whisker its 95% interval; bars whose whiskers overlap are not told apart.",
            note=note,
            series=False,
            alt=f"{label} by K and strategy",
            wide=True,
        )
    with tabs[1]:
        charts.show(
            multiq.categories_figure(tab),
            "mq-categories",
            "each bar is one strategy's questions at one K, split into correct (the two-way match), "
            "partially correct (most of the gold answer's keywords), not specified and wrong; hatched "
            "bars are the paper's counts as published (its whole-context runs give only the incorrect "
            "ones: the rest is drawn as correct).",
            note=f"Measured by this app with {models_of(t['model'])}; categories sorted by rule. Hatched: "
            f"{multiq.PAPER}, sorted by hand.",
            series=False,
            alt="answers by category, ours and the paper's, by K and strategy",
            wide=True,
        )
    with tabs[2]:
        charts.show(
            multiq.cost_figure(tab),
            "mq-cost",
            "input tokens sent per question (bar), and the calls sent (label): a prompt asks many "
            "questions, so a strategy's calls and tokens are divided by the questions they answered.",
            note=f"Measured by this app with {models_of(t['model'])}; tokens as the model counted them.",
            series=False,
            alt="input tokens and calls per question by K and strategy",
            wide=True,
        )
    with tabs[3]:
        table_view(tab)
    st.caption(
        "The position, length and cost tabs below draw document-position experiments; for these trials "
        "use **Trials** (each question's answer and its shared prompt), **Errors** and **Download**."
    )


def table_view(tab: pd.DataFrame) -> None:
    rows = multiq.beside(tab)
    if rows.empty:
        st.info("No multi-question trials to tabulate.")
        return
    st.dataframe(
        rows,
        hide_index=True,
        width="stretch",
        column_config={
            "strategy": st.column_config.TextColumn(width="medium"),
            "source": st.column_config.TextColumn(width="medium"),
            "correct (95% CI)": st.column_config.TextColumn(
                width="medium",
                help="two-way substring match: correct of n scored, Wilson 95% interval; the paper's "
                "rows: its counts as published",
            ),
            "incorrect as the paper counts it": st.column_config.NumberColumn(
                help="ours: wrong + not specified (partially correct apart, as §5.3 counts them)"
            ),
        },
    )
    st.caption(
        f"Published: {md(multiq.citation())} Our categories are sorted by rules (see the docs), the "
        "paper's by hand; its documents are SQuAD training-set paragraphs, ours the development set's."
    )
