"""Every chart the pages draw, built by the engine (components.report.charts, .promptmap), UI-free:
tables in, plotly figures out; the app's theme and the toolbar's export settings. Re-exported here so
pages reach the engine in one place."""

from __future__ import annotations

from components.report.charts import (
    COST_TITLES,
    accuracy_lines,
    accuracy_vs_cost,
    accuracy_vs_length,
    esc,
    export_config,
    heatmap,
    mini_curve,
    pareto,
    position_differences,
    printed,
    published_bars,
    published_lines,
    theme,
    u_curve,
)

__all__ = ["COST_TITLES", "accuracy_lines", "accuracy_vs_cost", "accuracy_vs_length", "esc", "export_config",
           "heatmap", "mini_curve", "pareto", "position_differences", "printed", "published_bars",
           "published_lines", "theme", "u_curve"]
