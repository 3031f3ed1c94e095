"""The Papers page's experiments (components.report.papers): each paper's main experiments, the published
table and our shipped run beside it (read-only, read again when a store's file changes), what differs, and
the command that reruns it; tables kept once per server process."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.report import papers as report_papers

PAPERS = report_papers.PAPERS
Experiment = report_papers.Experiment
experiments = report_papers.experiments
config_file = report_papers.config_file
not_rerun = report_papers.not_rerun
is_accuracy = report_papers.is_accuracy

__all__ = [
    "PAPERS",
    "Experiment",
    "citation",
    "config_file",
    "experiments",
    "is_accuracy",
    "mq_table",
    "not_rerun",
    "ours",
    "ours_n",
    "planned",
    "published",
]


def _find(key: str) -> Experiment:
    return next(e for e in report_papers.EXPERIMENTS if e.key == key)


@st.cache_data(show_spinner=False)
def published(key: str) -> pd.DataFrame:
    """The experiment's published table, as the paper printed it."""
    return report_papers.published_table(_find(key))


@st.cache_data(show_spinner=False, max_entries=32)
def _ours(key: str, version: tuple) -> tuple[pd.DataFrame, int]:
    exp = _find(key)
    trials = report_papers.shipped_trials(exp)
    return report_papers.ours_table(exp, trials), report_papers.ours_n(exp, trials)


def _version(exp: Experiment) -> tuple:
    from components.run.reader import store_version

    path = report_papers.run_path(exp)
    return store_version(path) if path is not None else ()


def ours(exp: Experiment) -> pd.DataFrame:
    """Our shipped run's table (empty without one): 'hits/n = p% (lo–hi%)' per cell and setting."""
    return _ours(exp.key, _version(exp))[0]


def ours_n(exp: Experiment) -> int:
    """The questions of our shipped run (0 without one)."""
    return _ours(exp.key, _version(exp))[1]


@st.cache_data(show_spinner=False, max_entries=32)
def _planned(key: str, version: tuple) -> int | None:
    return report_papers.planned_questions(_find(key))


def planned(exp: Experiment) -> int | None:
    """The questions the shipped run's config asks for (None when it does not say)."""
    return _planned(exp.key, _version(exp)) if exp.run else None


@st.cache_data(show_spinner=False, max_entries=8)
def _mq_table(key: str, version: tuple) -> pd.DataFrame:
    from webapp.services import multiq

    return multiq.table(multiq.trials(report_papers.shipped_trials(_find(key))), "mq_match")


def mq_table(exp: Experiment) -> pd.DataFrame:
    """A multi-question experiment's shipped run by K, Q and arm (services.multiq.table), for its category
    chart; empty for the other experiments or without a shipped run."""
    if exp.paper != "context_overloading_2025" or not exp.run:
        return pd.DataFrame()
    return _mq_table(exp.key, _version(exp))


def citation(paper: str) -> str:
    if paper == "context_overloading_2025":
        from components.report.published_004 import CITATION_004

        return CITATION_004
    from components.report.published import CITATIONS

    return str(CITATIONS.get(paper, PAPERS.get(paper, paper)))
