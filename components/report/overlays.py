"""Published curves on the axes of our own trials: R&R Tables 7-9 (accuracy by answer position in
tokens) and "Lost in the Middle" (accuracy by the gold document's index), with the later papers' curves
of the same NQ experiment (components/data/published_newer.csv), each named by its paper, table and
model, and by its method where a paper compares several (`published_label`); and current models' curves
(components/data/published_current.csv) against context length (NoLiMa, RULER) and against where the
relevant text sits, as a fraction of the context (LongPiBench). The rows come from
components.report.published.load_published.
"""

from __future__ import annotations

import pandas as pd

from components.core.metrics import LABELS
from components.report.analysis import position_kind
from components.report.published import CURRENT_SOURCES, NEWER_SOURCES

PUBLISHED_METRIC_LABELS = {  # our metrics by their one name (components.core.metrics)
    "fuzzy_match_pct": f"{LABELS['score']} (%)",
    "accuracy_pct": "accuracy (%)",
    "subspan_em_pct": f"{LABELS['subspan_em']} (%)",
    "em_pct": f"{LABELS['exact']} (%)",
    "em_fraction": "exact match (0-1)",
    "hallucination_rate_pct": "hallucination rate (%)",
    "recall_pct": "recall (%)",
    "score_avg13_pct": "score, 13-task mean (%)",
    "base_score_accuracy_pct": "base score: accuracy at 250-1K tokens (%)",
    "llm_calls": "LLM calls",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
}


def published_label(source: str, table: str, model: str, extra: str = "") -> str:
    """'published (rr2024, Table 7, GPT-4 Turbo)' — the only way a published number is named."""
    bits = [b for b in (source, table, model, extra) if isinstance(b, str) and b]
    return "published (" + ", ".join(bits) + ")"


def published_position_curves(pub: pd.DataFrame) -> pd.DataFrame:
    """R&R Tables 7-9: accuracy (as published, 0-1) against answer position in tokens, by d and method."""
    rows = pub[pub["answer_position_tokens"].notna() & (pub["metric"] == "fuzzy_match_pct")].copy()
    if rows.empty:
        return rows
    rows["position"] = rows["answer_position_tokens"].astype(int)
    rows["length"] = rows["doc_length_tokens"].astype(int)
    rows["mean"] = rows["value"].astype(float) / 100.0
    rows["label"] = [
        published_label(r.source, r.table, r.model, f"{r.dataset} {r.method} d={r.length // 1000}k")
        for r in rows.itertuples()
    ]
    return rows.sort_values(["table", "method", "length", "position"])


# the sources whose curves share LITM's gold-index axis (NQ multi-document QA), in the order offered
INDEX_SOURCES = ("liu2023", *NEWER_SOURCES)


def published_index_curves(pub: pd.DataFrame) -> pd.DataFrame:
    """Accuracy (as published, 0-1) against the gold document's index, by N: Lost in the Middle Tables
    5-7, then the later papers' curves (their method in the label: "Calibrated attention", "Pos2Distill").
    Column `method_shown` is the method where a paper compares several, else ""."""
    rows = pub[pub["source"].isin(INDEX_SOURCES) & pub["gold_index"].notna()].copy()
    if rows.empty:
        return rows
    rows["position"] = rows["gold_index"].astype(int)
    rows["n_documents"] = rows["n_documents"].astype(int)
    rows["mean"] = rows["value"].astype(float) / 100.0
    rows["method_shown"] = [
        m if s != "liu2023" else "" for s, m in zip(rows["source"], rows["method"], strict=True)
    ]
    rows["label"] = [
        published_label(
            r.source,
            r.table,
            r.model,
            ", ".join(x for x in (r.method_shown, f"{r.n_documents} documents") if x),
        )
        for r in rows.itertuples()
    ]
    rows["order"] = rows["source"].map({s: i for i, s in enumerate(INDEX_SOURCES)})
    return rows.sort_values(
        ["order", "table", "model", "method_shown", "n_documents", "position"], kind="stable"
    ).drop(columns="order")


def overlay_candidates(pub: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    """Published position curves (R&R Tables 7-9) on the x-axis of the trials, column `x`.

    Positions in tokens are compared as they are; positions given as fractions of the length are
    compared with the published position divided by its d. Curves whose d is among the trial
    lengths come first; when none matches, all are offered (the label names each d).
    """
    if trials.empty or pub is None or pub.empty:
        return pd.DataFrame()
    curves = published_position_curves(pub)
    if curves.empty:
        return curves
    kind = position_kind(trials)
    curves["x"] = curves["position"] / curves["length"] if kind == "fraction" else curves["position"]
    lengths = set(pd.to_numeric(trials.get("length"), errors="coerce").dropna().astype(int))
    near = curves[curves["length"].isin(lengths)]
    return (near if not near.empty else curves).reset_index(drop=True)


# current models' per-cell scores (a NoLiMa "base score" is a mean over short contexts, not a length)
LENGTH_METRICS = ("accuracy_pct", "score_avg13_pct")
LEVELS = 16  # LongPiBench cuts the context into 16 equal segments (its §2.3)


def _current_label(r) -> str:
    extra = r.dataset if r.method == "Base" else f"{r.dataset} {r.method}"
    return published_label(r.source, r.table, r.model, extra)


def published_length_curves(pub: pd.DataFrame) -> pd.DataFrame:
    """Current models (NoLiMa, RULER): the score as published (column `mean`, 0-1) against the context
    length in tokens (column `length`, the paper's K label as its own configs count it: NoLiMa 1K = 1000,
    RULER 4K = 4096), one curve per source, dataset, model and method (column `label`)."""
    rows = pub[
        pub["source"].isin(CURRENT_SOURCES)
        & pub["doc_length_tokens"].notna()
        & pub["gold_index"].isna()
        & pub["metric"].isin(LENGTH_METRICS)
    ].copy()
    if rows.empty:
        return rows
    rows["length"] = rows["doc_length_tokens"].astype(int)
    rows["mean"] = rows["value"].astype(float) / 100.0
    rows["label"] = [_current_label(r) for r in rows.itertuples()]
    return rows.sort_values(["source", "table", "model", "method", "length"], kind="stable")


def published_level_curves(pub: pd.DataFrame) -> pd.DataFrame:
    """LongPiBench: recall as published (column `mean`, 0-1) against where the relevant pieces sit: `level`
    the printed level 1-16, `position` its place as a fraction of the context, (level - 1) / 15 (the
    paper's "average location" over the length, §2.3), so it shares the x axis of trials whose position
    is a fraction; `length` the context (32000 tokens). One curve per model and query placement."""
    rows = pub[pub["source"].isin(CURRENT_SOURCES) & pub["gold_index"].notna()].copy()
    if rows.empty:
        return rows
    rows["level"] = rows["gold_index"].astype(int)
    rows["position"] = (rows["level"] - 1) / (LEVELS - 1)
    rows["length"] = rows["doc_length_tokens"].astype(int)
    rows["mean"] = rows["value"].astype(float) / 100.0
    rows["label"] = [_current_label(r) for r in rows.itertuples()]
    return rows.sort_values(["table", "model", "method", "level"], kind="stable")
