"""The researcher's views of Results (components.report.heatmap, .trialgrid, .report_html's Results
report) and the run stores' versions (components.run.reader.store_version: two stats a store), which
Results polls to redraw when a store grows. Re-exported here so pages reach the engine in one place."""

from __future__ import annotations

from components.report import heatmap as niah
from components.report import trialgrid
from components.report.report_html import build_results
from components.run.reader import store_version
from webapp.services import stores, views

__all__ = ["build_results", "grid", "heatmap", "niah", "trialgrid", "versions"]

# what every student sees the same is built once per server and store version (services/views.py)
grid = views.kept(trialgrid.build)


@views.kept
def heatmap(df, metric: str, metric_label: str):
    """(components.report.heatmap.heatmap's figure, its height): the height read once, when built, so a
    later student's kept figure is not copied to read it."""
    fig = niah.heatmap(df, metric, metric_label=metric_label)
    return fig, int(fig.layout.height or 0) or None


def versions() -> tuple:
    """The version of every run store Results reads (changes whenever one is written)."""
    return tuple((str(path), store_version(path)) for _, _, path in stores.sources())
