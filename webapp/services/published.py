"""The published curves of the papers: one loader for every page (LITM Tables 1 and 5-7, R&R Tables
1-9, ALR2 Tables 1-4, and the later papers' NQ curves; components/data/published_*.csv), with every
series named by its model, its method where the paper compares several, and its paper and table
(services/names.py)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.report import overlays
from components.report.published import CITATIONS, SHORT_NAMES
from components.report.published import COLUMNS as COLUMNS
from webapp.services.names import published as published_name

METRIC_LABELS = overlays.PUBLISHED_METRIC_LABELS
SHORT_NAMES = SHORT_NAMES  # source -> the paper's short name
CLOSED_BOOK, ORACLE = "closed-book", "oracle"


@st.cache_data(show_spinner=False)
def rows() -> pd.DataFrame:
    """Every published row (components.report.published.load_published), loaded once per server."""
    from components.report.published import load_published

    return load_published()


def citation(source: str) -> str:
    return str(CITATIONS.get(source, source))


@st.cache_data(show_spinner=False, max_entries=8)
def index_curves(n_documents=None) -> pd.DataFrame:
    """LITM Tables 5-7, then the later papers' curves of the same experiment: accuracy (0-1) against the
    gold document's index (column x), one curve per model (and method) and N; `label` is the engine's
    series name, `title` the one shown: 'GPT-3.5-Turbo · 20 documents · LITM Table 6 (2023)',
    'Mistral-7B · Pos2Distill · 20 documents · Pos2Distill Table 1 (2025)'; `n_documents` keeps those N."""
    curves = overlays.published_index_curves(rows())
    if n_documents is not None:
        curves = curves[curves["n_documents"].isin(set(n_documents))]
    if curves.empty:
        return curves
    curves = curves.assign(x=curves["position"])
    curves["title"] = [
        published_name(
            r.model,
            r.source,
            r.table,
            " · ".join(x for x in (r.method_shown, f"{r.n_documents} documents") if x),
        )
        for r in curves.itertuples()
    ]
    return curves


def position_curves(trials: pd.DataFrame) -> pd.DataFrame:
    """R&R Tables 7-9 on the trials' position axis (column x); `title` names model, dataset, method, d,
    paper and table."""
    curves = overlays.overlay_candidates(rows(), trials)
    if curves.empty:
        return curves
    curves = curves.copy()
    curves["title"] = [
        published_name(r.model, r.source, r.table, f"{r.dataset} {r.method} d={r.length // 1000}k")
        for r in curves.itertuples()
    ]
    return curves


def bounds(model: str) -> dict[str, float]:
    """LITM Table 1: closed-book and oracle accuracy (0-1) of a model, as published."""
    pub = rows()
    part = pub[(pub["source"] == "liu2023") & (pub["table"] == "Table 1") & (pub["model"] == model)]
    return {
        m: float(v) / 100
        for m, v in zip(part["method"], part["value"], strict=True)
        if m in (CLOSED_BOOK, ORACLE)
    }


@st.cache_data(show_spinner=False)
def length_curves() -> pd.DataFrame:
    """Current models' scores against context length (NoLiMa, RULER; overlays.published_length_curves)."""
    return overlays.published_length_curves(rows())
