"""The statistics the Results and Compare pages show (components.report.analysis and .compare): accuracy
with n and Wilson intervals per cell, curves, heatmaps, cost tables, paired comparisons of arms, the
planner, failures; the shape of every curve (report.shape) and the likelihood curves (report.likelihood);
and the one-file Compare report. Re-exported here so pages reach the engine in one
place (when an engine module is renamed, this file changes, not the pages)."""

from __future__ import annotations

from components.core.cells import LAYOUTS, Cell, Layout, layout_of
from components.core.metrics import ANSWER_COLUMNS, LABELS, LIKELIHOOD, METRICS, PRIMARY
from components.core.metrics import COLUMNS as METRIC_COLUMNS
from components.core.stats import NO_INTERVAL, proportion_ci
from components.report.analysis import (
    by_length,
    cost_table,
    error_summary,
    filter_trials,
    first_pages_mask,
    heatmap,
    is_error,
    position_kind,
    scored,
    series_label,
    u_curve,
)
from components.report.compare import (
    FAILURE_SOURCES,
    Comparison,
    arms,
    by_position,
    cells_per_task,
    compare,
    cost_per_1000,
    default_arms,
    failures,
    filter_length,
    known_labels,
    prepare,
    seconds_text,
)
from components.report.judge_audit import AGAINST as JUDGE_AGAINST
from components.report.judge_audit import VERDICTS as JUDGE_VERDICTS
from components.report.judge_audit import audits as judge_audits
from components.report.judge_audit import disagreeing as judge_disagreeing
from components.report.judge_audit import summary as judge_summary
from components.report.likelihood import lines as likelihood_lines
from components.report.planner import pairs_plan
from components.report.promptmap import rebuild_prompt
from components.report.shape import by_series as shapes
from components.report.verdict import DEFAULT_MARGIN, DEFAULT_MIN_SAVING, REFERENCE_MODEL, money
from components.strategies.litm import ClosedBook
from webapp.services import names, views

__all__ = [
    "CLOSED_BOOK",
    "Comparison",
    "LAYOUTS",
    "CELL_COLUMNS",
    "Layout",
    "layout_of",
    "DEFAULT_MARGIN",
    "DEFAULT_MIN_SAVING",
    "FAILURE_SOURCES",
    "JUDGE_AGAINST",
    "JUDGE_VERDICTS",
    "LIKELIHOOD",
    "REFERENCE_MODEL",
    "ANSWER_COLUMNS",
    "LABELS",
    "METRIC_COLUMNS",
    "METRICS",
    "NO_INTERVAL",
    "PRIMARY",
    "arms",
    "by_length",
    "by_position",
    "cells_per_task",
    "compare",
    "cost_per_1000",
    "cost_table",
    "default_arms",
    "error_summary",
    "failures",
    "filter_length",
    "filter_trials",
    "first_pages_mask",
    "heatmap",
    "is_error",
    "judge_audits",
    "judge_disagreeing",
    "judge_summary",
    "known_labels",
    "likelihood_lines",
    "pairs_plan",
    "models_of",
    "money",
    "position_kind",
    "prepare",
    "proportion_ci",
    "rebuild_prompt",
    "report",
    "scored",
    "seconds_text",
    "series_label",
    "shapes",
    "u_curve",
]

CLOSED_BOOK = ClosedBook.name
CELL_COLUMNS = Cell.columns  # the trial columns that name a cell (core.cells)

# What Results and Compare compute from the stores, kept per store version and arguments (services/views.py):
# every student's default view is computed once per server process; the heavy statistics (bootstrap bands,
# shape tests, exact McNemar with Holm, the verdict) are also kept on disk for the next server process.
by_length = views.kept(by_length)
cost_table = views.kept(cost_table)
error_summary = views.kept(error_summary)
filter_trials = views.kept(filter_trials)
filter_length = views.kept(filter_length)
first_pages_mask = views.kept(first_pages_mask)
heatmap = views.kept(heatmap)
is_error = views.kept(is_error)
position_kind = views.kept(position_kind)
scored = views.kept(scored)
series_label = views.kept(series_label)
u_curve = views.kept(u_curve)
arms = views.kept(arms, priced=True)
by_position = views.kept(by_position)
cells_per_task = views.kept(cells_per_task)
default_arms = views.kept(default_arms)
failures = views.kept(failures)
prepare = views.kept(prepare)
compare = views.kept(compare, disk=True, priced=True)
shapes = views.kept(shapes, disk=True)
likelihood_lines = views.kept(likelihood_lines, disk=True)
rebuild_prompt = views.kept(rebuild_prompt)  # a trial's prompt map on Results, from its stored calls
judge_audits = views.kept(judge_audits)  # the LLM judge's audit of the judged sweeps shown (Results)
judge_disagreeing = views.kept(judge_disagreeing)
models_of = views.kept(names.models_of)  # a chart's note names the models of every trial drawn


def report(
    result: Comparison,
    *,
    figures: list,
    failures,
    failures_total,
    pair,
    prices,
    prices_edited,
    sources,
    tables=(),
) -> str:
    """The one-file Compare report (components.report.report_html)."""
    from components.report import report_html

    return report_html.build(
        result,
        figures=figures,
        failures=failures,
        failures_total=failures_total,
        pair=pair,
        prices=prices,
        prices_edited=prices_edited,
        sources=sources,
        tables=tables,
    )
