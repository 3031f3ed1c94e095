"""Every chart the pages draw, built by the engine (components.report.charts, .promptmap), UI-free:
tables in, plotly figures out; their colours (report.colours), the app's theme and the toolbar's export
settings (report.theme). Re-exported here so pages reach the engine in one place.

`once` keeps a figure every visitor sees the same (a published curve, the shipped run's curve, a prompt
map of a bundled sample): built once per server process, and each caller gets its own copy to theme and
annotate, made without plotly's validation (about 15 ms instead of the build's few hundred)."""

from __future__ import annotations

import functools

import plotly.graph_objects as go
import streamlit as st

from components.report import charts as report_charts
from components.report.charts import (
    COST_TITLES,
    arm_numbers,
    mini_curve,
    printed,
    published_bars,
    published_lines,
    token_axis,
)
from components.report.colours import DOMINATED, PALETTE, colour_word
from components.report.promptmap import colour_key
from components.report.promptmap import word as map_colour
from components.report.theme import esc, export_config, theme
from webapp.services import views

__all__ = [
    "COST_TITLES",
    "DOMINATED",
    "PALETTE",
    "colour_key",
    "colour_word",
    "map_colour",
    "accuracy_lines",
    "copy",
    "once",
    "accuracy_vs_cost",
    "accuracy_vs_length",
    "arm_numbers",
    "esc",
    "export_config",
    "heatmap",
    "likelihood_curve",
    "mini_curve",
    "pareto",
    "position_differences",
    "printed",
    "published_bars",
    "published_lines",
    "theme",
    "token_axis",
    "u_curve",
]


# The figures of Results and Compare, kept per content of their tables and arguments (services/views.py):
# a student whose view is another's gets a copy of the figure built for the first.
u_curve = views.kept(report_charts.u_curve)
heatmap = views.kept(report_charts.heatmap)
accuracy_vs_cost = views.kept(report_charts.accuracy_vs_cost)
accuracy_vs_length = views.kept(report_charts.accuracy_vs_length)
accuracy_lines = views.kept(report_charts.accuracy_lines)
pareto = views.kept(report_charts.pareto)
position_differences = views.kept(report_charts.position_differences)
likelihood_curve = views.kept(report_charts.likelihood_curve)


def copy(fig: go.Figure) -> go.Figure:
    """A figure of one's own from a kept one, without validating again what was valid when it was built."""
    return go.Figure(fig.to_dict(), _validate=False)


def _copied(value):
    if isinstance(value, go.Figure):
        return copy(value)
    if isinstance(value, tuple):
        return tuple(_copied(v) for v in value)
    if isinstance(value, (dict, list)):
        return type(value)(value)
    return value


def once(builder):
    """`builder` (hashable arguments; returns a figure, or a tuple holding figures) run once per server
    process and arguments (st.cache_resource); every call returns fresh copies of its figures, so a page
    may theme or change its own without touching the kept one or another session's."""
    kept = st.cache_resource(show_spinner=False, max_entries=64)(builder)

    @functools.wraps(builder)
    def fresh(*args, **kwargs):
        return _copied(kept(*args, **kwargs))

    fresh.clear = kept.clear
    return fresh
