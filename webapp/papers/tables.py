"""Papers' published tables as charts: one entry per view (its tables, x, series, chart kind, filters),
and how each is drawn, with the papers' own values and metrics."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp.services import figures, published
from webapp.services import papers as experiments
from webapp.session import State
from webapp.ui import charts, pickers
from webapp.ui.render import guard, md

PUBLISHED_METRIC_LABELS = published.METRIC_LABELS

PAPERS = {
    **experiments.PAPERS,  # the four the app is built on, each with its experiments to rerun
    "hsieh2024": "Found in the Middle (Hsieh et al., 2024)",
    "pos2distill2025": "Pos2Distill (Wang et al., 2025)",
}
FALLBACK_CITATIONS = {
    "liu2023": "Liu, Lin, Hewitt, Paranjape, Bevilacqua, Petroni, Liang. Lost in the Middle: How Language "
    "Models Use Long Contexts. 2023. arXiv:2307.03172.",
    "rr2024": "Agrawal, Gao, Gajek. Can't Remember Details in Long Documents? You Need Some R&R. 2024. "
    "arXiv:2403.05004.",
    "alr2_2024": "Li, Verga, Sen, Yang, Viswanathan, Lewis, Watanabe, Su. ALR2: A Retrieve-then-Reason "
    "Framework for Long-context Question Answering. 2024.",
}
X_TITLES = {
    "gold_index": "position of the gold document (index, 0 = first)",
    "answer_position_tokens": "answer position x (tokens)",
    "doc_length_tokens": "document length d (tokens; the paper's k label × 1000)",
    "chunk_size_tokens": "chunk size c (tokens)",
    "dataset": "dataset",
    "model": "model",
}
FILTER_LABELS = {"doc_length_tokens": "d = {}", "n_documents": "{} documents", "metric": "{}"}
DEFAULTS = {"n_documents": 20, "dataset": "NQ"}  # else the first option; d: the longest
FILTER_TITLES = {
    "dataset": "Dataset",
    "model": "Model",
    "doc_length_tokens": "Document length d (tokens)",
    "n_documents": "Documents in the context",
    "metric": "Metric",
    "method": "Method",
}

# One entry per view: which tables, x, series, chart kind, the filters offered, and a caption.
VIEWS: dict[str, list[dict]] = {
    "liu2023": [
        dict(
            name="Tables 5-7: accuracy by the gold document's position (10, 20, 30 documents)",
            tables=["Table 5", "Table 6", "Table 7"],
            x="gold_index",
            series=["model"],
            kind="line",
            filters=["n_documents"],
            references=True,
        ),
        dict(
            name="Table 1: closed-book and oracle",
            tables=["Table 1"],
            x="model",
            series=["method"],
            kind="bar",
            filters=[],
        ),
    ],
    "rr2024": [
        dict(
            name="Tables 7-9: accuracy by answer position and length",
            tables=["Table 7", "Table 8", "Table 9"],
            x="answer_position_tokens",
            series=["method"],
            kind="line",
            filters=["dataset", "doc_length_tokens"],
        ),
        dict(
            name="Table 1: accuracy by document length",
            tables=["Table 1"],
            x="doc_length_tokens",
            series=["method", "model"],
            kind="line",
            filters=["dataset"],
        ),
        dict(
            name="Table 2: chunked ICR and R&R by chunk size",
            tables=["Table 2"],
            x="chunk_size_tokens",
            series=["method", "model"],
            kind="line",
            filters=["dataset"],
        ),
        dict(
            name="Table 3: calls and tokens per question by chunk size",
            tables=["Table 3"],
            x="chunk_size_tokens",
            series=["method"],
            kind="line",
            filters=["metric"],
        ),
        dict(
            name="Table 4: direct answer vs page retrieval",
            tables=["Table 4"],
            x="dataset",
            series=["method", "metric"],
            kind="bar",
            filters=[],
        ),
        dict(
            name="Table 5: reprompting interval r",
            tables=["Table 5"],
            x="dataset",
            series=["method"],
            kind="bar",
            filters=[],
        ),
        dict(
            name="Table 6: reprompting variants",
            tables=["Table 6"],
            x="dataset",
            series=["method"],
            kind="bar",
            filters=[],
        ),
    ],
    "alr2_2024": [
        dict(
            name="Table 1: exact match by context length",
            tables=["Table 1"],
            x="doc_length_tokens",
            series=["model", "method"],
            kind="line",
            filters=["dataset"],
        ),
        dict(
            name="Table 2: hallucination and recall of retrieved sentences",
            tables=["Table 2"],
            x="doc_length_tokens",
            series=["model"],
            kind="line",
            filters=["metric"],
        ),
        dict(
            name="Table 3: StrategyQA and TriviaQA",
            tables=["Table 3"],
            x="doc_length_tokens",
            series=["model", "method"],
            kind="line",
            filters=["dataset"],
        ),
        dict(
            name="Table 4: multi-hop passkey retrieval",
            tables=["Table 4"],
            x="doc_length_tokens",
            series=["method"],
            kind="line",
            filters=[],
        ),
    ],
    # later papers: LITM's NQ multi-document QA on open models, with and without their fixes
    "hsieh2024": [
        dict(
            name="Table 5: NQ accuracy by the gold document's position (10, 20 documents)",
            tables=["Table 5"],
            x="gold_index",
            series=["model", "method"],
            kind="line",
            filters=["n_documents"],
        ),
    ],
    "pos2distill2025": [
        dict(
            name="Table 1, NQ: best subspan EM by the gold document's position (20 documents)",
            tables=["Table 1"],
            x="gold_index",
            series=["method"],
            kind="line",
            filters=["model"],
        ),
    ],
}


def citation(source: str, rows: pd.DataFrame) -> str:
    c = published.citation(source)
    if (not c or c == source) and "citation" in rows and rows["citation"].notna().any():
        c = rows["citation"].dropna().iloc[0]
    return str(c if c and c != source else FALLBACK_CITATIONS.get(source, source))


def metric_title(rows: pd.DataFrame) -> str:
    metrics = list(dict.fromkeys(rows["metric"].dropna()))
    names = " / ".join(PUBLISHED_METRIC_LABELS.get(m, m) for m in metrics) or "value"
    return f"{names}, as published"


def pick_filters(view: dict, rows: pd.DataFrame, key: tuple, cols) -> tuple[pd.DataFrame, list[str]]:
    chosen = []
    for col, name in zip(cols, view["filters"], strict=False):
        options = sorted(rows[name].dropna().unique().tolist())
        if not options:
            continue
        fmt = (lambda v: f"{int(v):,}") if name in ("doc_length_tokens", "n_documents") else str
        choice = pickers.select(
            col,
            FILTER_TITLES.get(name, name),
            options,
            State.papers(*key, name),
            default=DEFAULTS.get(name, max(options) if name == "doc_length_tokens" else None),
            format_func=fmt,
        )
        rows = rows[rows[name] == choice]
        chosen.append(FILTER_LABELS.get(name, "{}").format(fmt(choice)))
    return rows, chosen


def references(source_rows: pd.DataFrame, models: list[str], key: tuple, where) -> pd.DataFrame | None:
    """Closed-book and oracle (LITM Table 1) of one model, as horizontal reference lines."""
    ref = source_rows[
        (source_rows["table"] == "Table 1") & source_rows["method"].isin(["closed-book", "oracle"])
    ]
    options = [m for m in models if m in set(ref["model"])]
    if not options:
        return None
    model = pickers.select(
        where,
        "Closed-book and oracle reference lines for",
        ["none", *options],
        State.papers(*key, "ref"),
        default=options[0],
    )
    if model == "none":
        return None
    part = ref[ref["model"] == model]
    return pd.DataFrame(
        {
            "label": [f"{m} ({model}, Table 1, as published)" for m in part["method"]],
            "value": part["value"].astype(float).tolist(),
        }
    )


def show_view(source: str, view: dict, rows: pd.DataFrame, key: tuple) -> None:
    data = rows[rows["table"].isin(view["tables"])].copy()
    cols = st.columns(3)
    data, chosen = pick_filters(view, data, key, cols)
    data["series"] = data[view["series"]].fillna("").astype(str).agg(" · ".join, axis=1).str.strip(" ·")
    data["value"] = pd.to_numeric(data["value"], errors="coerce")
    x = view["x"]
    chart_rows = data[data[x].notna()]
    overall = data[data[x].isna()]
    tables = ", ".join(sorted(set(chart_rows["table"]))) or ", ".join(view["tables"])
    models = sorted(set(data["model"].dropna()) - {""})
    if len(models) == 1:
        chosen.append(models[0])
    title = f"{PAPERS[source].split(' (')[0]}, {tables} (as published)" + (
        ": " + ", ".join(chosen) if chosen else ""
    )
    y_title = metric_title(data)
    if view["kind"] == "line":
        refs = (
            references(rows, sorted(set(chart_rows["model"].dropna())), key, cols[len(view["filters"])])
            if view.get("references")
            else None
        )
        fig = figures.published_lines(
            chart_rows, x, "series", title=title, x_title=X_TITLES.get(x, x), y_title=y_title, references=refs
        )
        if x == "gold_index":
            fig.update_xaxes(dtick=5 if chart_rows[x].max() > 10 else 1)
        else:
            figures.token_axis(fig, chart_rows[x])
    else:
        fig = figures.published_bars(
            chart_rows, x, "series", title=title, x_title=X_TITLES.get(x, x), y_title=y_title
        )
    how = (
        (
            "each line is one series as the paper printed it (hover for the printed value); a dip in the middle "
            "is the lost-in-the-middle effect; dashed horizontal lines are reference settings."
        )
        if view["kind"] == "line"
        else "each bar is one published value, printed above it; compare bars of a group."
    )
    charts.show(
        fig,
        f"{source}-{'-'.join(view['tables'])}",
        how,
        note=f"As published in {PAPERS[source]}, {tables}; not measured by this app.",
        alt=f"{title}: {y_title} against {X_TITLES.get(x, x)}, one line or bar colour per series",
    )
    if not overall.empty:
        st.caption(
            "Overall (the paper's average over lengths), as published: "
            + "; ".join(f"{s}: {v}" for s, v in zip(overall["series"], figures.printed(overall), strict=True))
        )
    with st.expander("The published rows"):
        show = published.COLUMNS  # the published rows' columns, as the file holds them
        st.dataframe(data[[c for c in show if c in data]].dropna(axis=1, how="all"), hide_index=True)


def paper_tab(source: str, rows: pd.DataFrame, sourced: bool = False) -> None:
    """`sourced`: the tab named its source already, above its experiments."""
    if not sourced:
        st.caption(f"**Source:** {md(citation(source, rows))}")
    views = VIEWS[source]
    names = [v["name"] for v in views]
    name = pickers.select(st, "Table", names, State.papers(source, "view"))
    view = views[names.index(name)]
    with guard(f"the {PAPERS[source]} chart"):
        show_view(source, view, rows, (source, names.index(name)))
