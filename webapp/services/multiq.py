"""The multi-question design ("Context Overloading in RAG Based Systems", seed 004) for Results and Compare:
its tables and charts (components.report.multiq) and the paper's §5.3 numbers (components.report.published_004,
loaded once per server), each series named by its model and source (services/names.py)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.report import multiq as _mq
from webapp.services.names import THIS_APP, model_title

K, Q, CATEGORIES = _mq.K, _mq.Q, _mq.CATEGORY_LABELS
PAPER = _mq.PAPER
WHO = f" · {THIS_APP}"

__all__ = ["CATEGORIES", "K", "PAPER", "Q", "WHO", "accuracy_figure", "beside", "categories_figure", "citation",
           "cost_figure", "is_multi", "published", "table", "trials"]

is_multi = _mq.is_multi
trials = _mq.trials


def table(df: pd.DataFrame, metric: str = "mq_match") -> pd.DataFrame:
    """components.report.multiq.table, each arm named by its model's title ('mq-full · Qwen2.5 Coder 0.5B')."""
    out = _mq.table(df, metric)
    if len(out):
        out["arm"] = [f"{s} · {model_title(m) or m}" for s, m in zip(out["setting"], out["model"], strict=True)]
    return out


@st.cache_data(show_spinner=False)
def published() -> pd.DataFrame:
    """The paper's §5.3 counts, one row per (strategy, K, Q) (report.multiq.published)."""
    from components.report.published_004 import load_published_004

    return _mq.published(load_published_004())


def citation() -> str:
    from components.report.published_004 import CITATION_004

    return CITATION_004


def beside(ours: pd.DataFrame, every_k: bool = False) -> pd.DataFrame:
    return _mq.beside(ours, published(), every_k=every_k)


def accuracy_figure(tab: pd.DataFrame, metric_label: str):
    return _mq.accuracy_figure(tab, metric_label=metric_label, who=WHO)


def categories_figure(tab: pd.DataFrame, with_paper: bool = True):
    return _mq.categories_figure(tab, published() if with_paper else None, who=WHO)


def cost_figure(tab: pd.DataFrame):
    return _mq.cost_figure(tab, who=WHO)
