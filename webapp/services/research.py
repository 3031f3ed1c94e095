"""The researcher's views of Results (components.report.heatmap, .trialgrid, .report_html's Results
report) and the run stores' versions (components.run.reader.store_version: two stats a store), which
Results polls to redraw when a store grows. Re-exported here so pages reach the engine in one place."""

from __future__ import annotations

from components.report import heatmap as niah
from components.report import trialgrid
from components.report.report_html import build_results
from components.run.reader import store_version
from webapp.services import stores

__all__ = ["build_results", "niah", "trialgrid", "versions"]


def versions() -> tuple:
    """The version of every run store Results reads (changes whenever one is written)."""
    return tuple((str(path), store_version(path)) for _, _, path in stores.sources())
