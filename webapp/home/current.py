"""Home's second view, "what current models show": one sentence and one chart, NoLiMa's accuracy of
current models against context length when the question and the needle share no words (the numbers as
published, components/data/published_current.csv). Its own module so Home's first view and doors are
edited apart from it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.services import figures, published
from webapp.ui import charts

SOURCE, TABLE, DATASET = "nolima2025", "README: Results", "NoLiMa"
MODELS = ("GPT-4o", "Gemini 1.5 Pro", "Llama 3.3 70B")  # the sentence names the first
TITLE = "Current models, no literal match"
HEADING = "What current models show"


def curves() -> pd.DataFrame:
    c = published.length_curves()
    return c[
        (c["source"] == SOURCE) & (c["table"] == TABLE) & (c["dataset"] == DATASET) & c["model"].isin(MODELS)
    ]


def tokens(n: int) -> str:
    return f"{n // 1000:,}K" if n % 1000 == 0 else f"{n:,}"


def sentence(rows: pd.DataFrame) -> str:
    """The one sentence, its numbers read from the rows: the first model's accuracy at the shortest and
    the longest context."""
    part = rows[rows["model"] == MODELS[0]].sort_values("length")
    first, last = part.iloc[0], part.iloc[-1]
    return (
        "Today's models still miss what they read when the question and the needle share no words (one "
        f"step of common knowledge links them), and more so the longer the context: {MODELS[0]} finds "
        f"the answer {first['value_printed']}% of the time at {tokens(int(first['length']))} tokens and "
        f"{last['value_printed']}% at {tokens(int(last['length']))} (NoLiMa, ICML 2025, as published)."
    )


def current_view(present: bool, width: int) -> None:
    rows = curves()
    if rows.empty:
        return
    st.subheader(HEADING)
    words, chart = st.columns([2, 3], gap="medium")
    with words:
        st.markdown(sentence(rows))
        try:
            st.page_link(
                "papers/page.py", label="**Later results** on the Papers page", icon=":material/menu_book:"
            )
        except Exception:  # the page runs outside the app's navigation
            st.markdown("**Later results** on the Papers page")
    with chart:
        data = rows.assign(series=rows["model"])
        fig = figures.published_lines(
            data, "length", "series", title=TITLE, x_title="context length (tokens)", y_title="accuracy (%)"
        )
        figures.token_axis(fig, data["length"])
        charts.show(
            fig,
            "home-current",
            "accuracy (y) against the length of the context (x): each line falls to the right.",
            note=f"As published: {published.SHORT_NAMES[SOURCE]}, the authors' results table; not "
            "measured by this app.",
            note_width=width,
            height=380 if present else 360,
        )
