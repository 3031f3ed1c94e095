"""Papers: the place to rerun the four papers the app is built on (Lost in the Middle, R&R, ALR2, Context
Overloading in RAG Based Systems). For each, its main experiments (services/papers.py: a table of them):
what each measured, the published table beside our shipped run (n and intervals), what differs, and the
command (or the Experiments page's grid) that reruns it; then the published tables as charts, and the two
later papers' curves of LITM's NQ experiment (Found in the Middle, Pos2Distill). Runs nothing itself."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from webapp import session
from webapp.services import figures, multiq, published
from webapp.services import papers as experiments
from webapp.services.names import models_of
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


def token_axis(fig, values: pd.Series) -> None:
    """Ticks at the paper's own values ('4k', '8k', ...), on a log axis when they double."""
    vals = sorted(int(v) for v in pd.to_numeric(values, errors="coerce").dropna().unique())
    if not vals:
        return
    wide = len(vals) > 2 and vals[0] > 0 and vals[-1] / vals[0] >= 8
    fig.update_xaxes(
        type="log" if wide else "linear",
        tickvals=vals,
        ticktext=[f"{v // 1000}k" if v % 1000 == 0 and v else f"{v:,}" for v in vals],
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
            token_axis(fig, chart_rows[x])
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


def paper_tab(source: str, rows: pd.DataFrame) -> None:
    if source not in experiments.PAPERS:  # the four papers name their source above their experiments
        st.caption(f"**Source:** {md(citation(source, rows))}")
    views = VIEWS[source]
    names = [v["name"] for v in views]
    name = pickers.select(st, "Table", names, State.papers(source, "view"))
    view = views[names.index(name)]
    with guard(f"the {PAPERS[source]} chart"):
        show_view(source, view, rows, (source, names.index(name)))


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
            f"Published: {md(PAPERS[exp.paper].split(' (')[0])}, {md(', '.join(exp.tables))} "
            f"({md(exp.metric)}, as printed)"
        )
        if pub.empty:
            left.info("No published rows for this experiment.")
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
            right.markdown(
                f"Ours: the shipped run {md(exp.run)}, {experiments.ours_n(exp):,} questions "
                "(each cell: right / n = share, Wilson 95% interval)"
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


def main() -> None:
    session.start("papers")
    st.title("Papers")
    st.write(
        "The four papers this app is built on, each with its main experiments: what it measured, its "
        "published table beside the run of ours that ships with the app (with n and 95% intervals), what "
        "differs between the two, and the command that reruns it. Then the published tables as charts, "
        "and two later papers that measured LITM's 20-document NQ curve on open models with and without "
        "their fixes. Numbers marked **as published** are the papers' own, with their own metrics."
    )
    pub = published.rows()
    tabs = st.tabs(list(PAPERS.values()))
    for tab, source in zip(tabs, PAPERS, strict=True):
        with tab:
            rows = pub[pub["source"] == source]
            if source in experiments.PAPERS:
                st.caption(f"**Source:** {md(experiments.citation(source))}")
                rerun_section(source)
            if source not in VIEWS:
                continue
            if rows.empty:
                st.info("No published rows for this paper.")
                continue
            if source in experiments.PAPERS:
                st.subheader("The published tables as charts")
            paper_tab(source, rows)


with guard("the Papers page"):
    main()
