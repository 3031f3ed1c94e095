"""Papers, tab "Later results": what current models show on harder tasks, table by table, each with what
it measured, its source, and its numbers as published (components/data/published_current.csv): NoLiMa
and RULER against context length, LongPiBench against where the relevant text sits. Runs nothing."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.papers.tables import metric_title
from webapp.services import figures, published
from webapp.session import State
from webapp.ui import charts, pickers
from webapp.ui.render import guard, md

TAB = "Later results"
INTRO = (
    "The other tabs show 2023-2024 models on tasks whose question and answer share words. Later papers "
    "measured current models on harder tasks, where the effect is still there: accuracy falls with the "
    "length of the context when the question and the needle share no words (NoLiMa), on 13 synthetic "
    "tasks (RULER), and with where the relevant text sits (LongPiBench). Numbers **as published**, read "
    "from the authors' tables; none of the benchmarks' data ships with this app."
)

# One entry per table: its rows (source, table, dataset), the x axis, the series, what it measured,
# and the models drawn first (the rest can be added).
TABLES: list[dict] = [
    dict(
        slug="nolima",
        name="NoLiMa: accuracy by context length, no literal match",
        source="nolima2025",
        tables=["README: Results"],
        dataset="NoLiMa",
        x="doc_length_tokens",
        series=["model"],
        measured="A needle sentence is hidden in a long book excerpt, and the question shares no word with "
        "it: one hop of world knowledge links them (the question names a city, the needle a landmark in "
        "it). Accuracy of 18 models at 1K to 32K tokens (1K = 1,000 tokens, the authors' configs). The "
        "base score (accuracy at 250 to 1K tokens) is in the rows below the chart.",
        first=["GPT-4o", "Gemini 1.5 Pro", "Gemini Flash 2.0", "Llama 3.3 70B", "Claude 3.5 Sonnet"],
    ),
    dict(
        slug="nolima-hard",
        name="NoLiMa-Hard: the hardest questions, with and without reasoning",
        source="nolima2025",
        tables=["README: NoLiMa-Hard Results"],
        dataset="NoLiMa-Hard",
        x="doc_length_tokens",
        series=["model", "method"],
        measured="NoLiMa's hardest question-needle pairs, for reasoning models and for Llama 3.3 70B "
        "with and without chain of thought (CoT): accuracy at 1K to 32K tokens.",
        first=[],
    ),
    dict(
        slug="ruler",
        name="RULER: the mean of 13 tasks by sequence length",
        source="ruler2024",
        tables=["README: main results"],
        dataset="RULER (13 tasks)",
        x="doc_length_tokens",
        series=["model"],
        measured="Thirteen synthetic tasks (needle retrieval with several needles and keys, multi-hop "
        "tracing, aggregation, question answering), averaged, for 45 models at 4K to 128K tokens (4K = "
        "4,096). Rows marked * were reported by other papers' authors. Some rows are 2023 models.",
        first=["Gemini-1.5-pro", "GPT-4-1106-preview", "Llama3.1 (70B)", "Qwen3-32B* (32B)", "Llama3.1 (8B)"],
    ),
    dict(
        slug="longpibench",
        name="LongPiBench: recall by where the relevant text sits",
        source="longpibench2024",
        tables=["Table 1 (App. D)"],
        dataset="LongPiBench Table SQL (absolute position)",
        x="gold_index",
        series=["model"],
        measured="A 32k-token context cut into 16 equal segments, all ten relevant pieces of its Table "
        "SQL task put in one segment, level 1 (the start) to 16 (the end): recall of the "
        "reference labels in the answer, 11 models. The query is at the head and at the tail.",
        first=["GPT-4o-mini", "Claude-3-Haiku", "Gemini-1.5-Flash", "Llama-3.1-Instruct 70B", "Qwen-2.5 72B"],
    ),
    dict(
        slug="longpibench-query",
        name="LongPiBench: where the query is placed",
        source="longpibench2024",
        tables=["Table 3 (App. D)"],
        dataset="LongPiBench Table SQL (absolute position)",
        x="gold_index",
        series=["model", "method"],
        measured="The same task with the query only at the head, only at the tail, or at both (both = "
        "Table 1's setting), for GPT-4o-mini and Qwen-2.5 14B: recall by position level.",
        first=[],
    ),
]
X_TITLES = {
    "doc_length_tokens": "context length (tokens)",
    "gold_index": "position level of the relevant text (1 = start, 16 = end of 32k tokens)",
}


def table_rows(pub: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """The spec's rows: its source, tables and dataset."""
    return pub[
        (pub["source"] == spec["source"])
        & pub["table"].isin(spec["tables"])
        & (pub["dataset"] == spec["dataset"])
    ]


def show_table(spec: dict, rows: pd.DataFrame) -> None:
    st.subheader(spec["name"])
    st.write(f"**What it measured.** {spec['measured']}")
    st.caption(
        f"**Source:** {md(published.citation(spec['source']))} {md(', '.join(spec['tables']))}, as published."
    )
    x = spec["x"]
    chart_rows = rows[rows[x].notna()].copy()
    models = list(dict.fromkeys(chart_rows["model"]))
    if spec["first"]:
        chosen = pickers.multi(
            st, "Models", models, State.papers("later", spec["slug"], "models"), spec["first"]
        )
        chart_rows = chart_rows[chart_rows["model"].isin(chosen)]
    chart_rows["series"] = chart_rows[spec["series"]].astype(str).agg(" · ".join, axis=1)
    title = f"{spec['name'].split(':')[0]}, {', '.join(spec['tables'])} (as published)"
    y_title = metric_title(chart_rows if len(chart_rows) else rows)
    fig = figures.published_lines(chart_rows, x, "series", title=title, x_title=X_TITLES[x], y_title=y_title)
    if x == "gold_index":
        fig.update_xaxes(dtick=1)
    else:
        figures.token_axis(fig, chart_rows[x])
    charts.show(
        fig,
        f"later-{spec['slug']}",
        "each line is one model as the paper printed it (hover for the printed value); a line that falls "
        + (
            "to the right loses accuracy as the context grows."
            if x != "gold_index"
            else "in the middle is the lost-in-the-middle effect."
        ),
        note=f"As published in {published.SHORT_NAMES.get(spec['source'], spec['source'])}, "
        f"{', '.join(spec['tables'])}; not measured by this app.",
        alt=f"{title}: {y_title} against {X_TITLES[x]}, one line per model",
    )
    with st.expander("The published rows"):
        show = [c for c in published.COLUMNS if c in rows]
        st.dataframe(rows[show].dropna(axis=1, how="all"), hide_index=True)


def later_tab(pub: pd.DataFrame) -> None:
    st.write(INTRO)
    for spec in TABLES:
        rows = table_rows(pub, spec)
        if rows.empty:
            continue
        with guard(f"the {spec['name']} chart"):
            show_table(spec, rows)
