"""The Compare page's view of multi-question arms ("Context Overloading in RAG Based Systems", seed 004):
the chosen arms' accuracy at each number of contexts K (n and 95% Wilson intervals), their answers by
category beside the paper's §5.3 counts, and one table of both. Shown when a chosen arm holds
multi-question trials; the page's pairs already match them on the question and its K."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.services import multiq
from webapp.services.names import models_of
from webapp.ui import charts
from webapp.ui.render import guard, md


def section(t: pd.DataFrame, labels: list[str]) -> None:
    """The view, when the chosen arms (`labels`, of the prepared trials `t`) hold multi-question trials."""
    with guard("the multi-question view"):
        part = multiq.trials(t[t["arm"].isin(labels)]) if "arm" in t else t.iloc[0:0]
        if part.empty:
            return
        tab = multiq.table(part, "ok")  # each arm's primary metric as Compare scores it (1/0)
        st.subheader("Many questions at once: the chosen arms by K")
        st.caption(
            "One trial per question; the pairs above match each question with itself at the same K. "
            f"Hatched bars: the paper's §5.3 counts ({md(multiq.PAPER)}, one document per K, sorted by "
            "hand)."
        )
        who = models_of(part["model"])
        charts.show(
            multiq.accuracy_figure(tab, "correct"),
            "compare-mq-accuracy",
            "one bar per arm at each K; the label is correct of n, the whisker its 95% interval.",
            note=f"Measured by this app with {who}; 95% Wilson intervals.",
            series=False,
            alt="accuracy of the chosen arms by K",
        )
        charts.show(
            multiq.categories_figure(tab),
            "compare-mq-categories",
            "each bar splits an arm's questions at one K into correct, partially correct, not specified "
            "and wrong; hatched bars are the paper's counts as published.",
            note=f"Measured by this app with {who}; categories sorted by rule. Hatched: {multiq.PAPER}, "
            "sorted by hand.",
            series=False,
            alt="answers by category, the chosen arms and the paper's",
        )
        st.dataframe(
            multiq.beside(tab),
            hide_index=True,
            width="stretch",
            column_config={
                "strategy": st.column_config.TextColumn(width="medium"),
                "source": st.column_config.TextColumn(width="medium"),
                "correct (95% CI)": st.column_config.TextColumn(width="medium"),
            },
        )
        st.caption(f"Published: {md(multiq.citation())}")
